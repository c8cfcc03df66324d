//go:build e2e

package batch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/invariants"
)

// Kueue's and the ProvisioningRequest API's kinds, read unstructured:
// Capstan's module does not link Kueue, which pins other Kubernetes
// libraries.
var (
	workloadGVK            = schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "Workload"}
	localQueueKind         = "LocalQueue"
	provisioningRequestGVK = schema.GroupVersionKind{Group: "autoscaling.x-k8s.io", Version: "v1", Kind: "ProvisioningRequest"}
)

// The names the API and Kueue v0.17 give (k8s.io/autoscaler
// cluster-autoscaler/apis provisioningrequest v1; sigs.k8s.io/kueue
// apis/kueue/v1beta2 and pkg/controller/admissionchecks/provisioning).
const (
	queueNameLabel        = "kueue.x-k8s.io/queue-name"
	atomicClass           = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
	consumeAnnotation     = "autoscaling.x-k8s.io/consume-provisioning-request"
	admissionCheck        = "capstan-provisioning"
	conditionAdmitted     = "Admitted"
	conditionQuota        = "QuotaReserved"
	conditionProvisioned  = "Provisioned"
	checkStateReady       = "Ready"
	checkStatePending     = "Pending"
	kueueManifestsPattern = "test/e2e/batch/testdata/kueue.yaml"
)

// createQueues creates testdata/kueue.yaml's cluster-wide objects, which
// every scenario shares; each scenario makes its own LocalQueue.
func createQueues(c *test.Cluster) error {
	manifests, err := test.ReadManifests(kueueManifestsPattern)
	if err != nil {
		return err
	}
	for _, m := range manifests {
		if m.Object.GetKind() == localQueueKind {
			continue
		}
		if err := c.Client.Create(context.Background(), m.Object); err != nil {
			return fmt.Errorf("creating %s %s, %w", m.Object.GetKind(), m.Object.GetName(), err)
		}
	}
	return nil
}

// scenario is one test's namespace, with testdata/kueue.yaml's LocalQueue
// in it, and NodePool, pinned by requirements and tainted so only the
// test's pods land on its nodes, watched by the invariant checker.
type scenario struct {
	ns    string
	np    *v1.NodePool
	guard *invariants.Checker
}

func newScenario(t *testing.T, reqs ...v1.NodeSelectorRequirementWithMinValues) *scenario {
	t.Helper()
	ctx := context.Background()
	g := test.NewGomega(t)
	c := cluster.Client
	ns := test.Namespace(t, c)
	snc := test.SimNodeClass()
	np := test.ScenarioNodePool(ns, snc, reqs...)
	manifests, err := test.ReadManifests(kueueManifestsPattern)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, m := range manifests {
		if m.Object.GetKind() == localQueueKind {
			m.Object.SetNamespace(ns)
			g.Expect(c.Create(ctx, m.Object)).To(gomega.Succeed())
		}
	}
	g.Expect(c.Create(ctx, snc)).To(gomega.Succeed())
	g.Expect(c.Create(ctx, np)).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, np); _ = c.Delete(ctx, snc) })
	guard := invariants.New(invariants.Options{SimState: filepath.Join(cluster.Root, "sim-state.json"), PendingBound: 30 * time.Second})
	guard.Watch(t, cluster.Config, cluster.Scheme, ns, np.Name)
	return &scenario{ns: ns, np: np, guard: guard}
}

// job is testdata/job.yaml in the scenario's namespace, its pods
// tolerating the scenario's taint and kept to its NodePool.
func (s *scenario) job(g gomega.Gomega) *batchv1.Job {
	data, err := os.ReadFile("testdata/job.yaml")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	job := &batchv1.Job{}
	g.Expect(yaml.UnmarshalStrict(data, job)).To(gomega.Succeed())
	job.Namespace = s.ns
	spec := &job.Spec.Template.Spec
	spec.Tolerations = append(spec.Tolerations, test.ScenarioToleration(s.ns))
	spec.NodeSelector = map[string]string{v1.NodePoolLabelKey: s.np.Name}
	return job
}

// workloadOf is the Kueue Workload of job (Kueue makes one per Job, owned
// by it).
func workloadOf(g gomega.Gomega, job *batchv1.Job) *unstructured.Unstructured {
	return ownedBy(g, workloadGVK, job.Namespace, job.UID)
}

// provisioningRequestOf is the ProvisioningRequest Kueue made for wl's
// admission check (owned by the Workload).
func provisioningRequestOf(g gomega.Gomega, wl *unstructured.Unstructured) *unstructured.Unstructured {
	return ownedBy(g, provisioningRequestGVK, wl.GetNamespace(), wl.GetUID())
}

// ownedBy is the one object of a kind in namespace owned by owner; it
// fails g unless there is exactly one.
func ownedBy(g gomega.Gomega, gvk schema.GroupVersionKind, namespace string, owner types.UID) *unstructured.Unstructured {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	g.Expect(cluster.Client.List(context.Background(), list, client.InNamespace(namespace))).To(gomega.Succeed())
	var owned []*unstructured.Unstructured
	for i := range list.Items {
		for _, ref := range list.Items[i].GetOwnerReferences() {
			if ref.UID == owner {
				owned = append(owned, &list.Items[i])
			}
		}
	}
	g.Expect(owned).To(gomega.HaveLen(1), "%s objects owned by %v", gvk.Kind, owner)
	return owned[0]
}

// conditions are an unstructured object's status conditions.
func conditions(g gomega.Gomega, obj *unstructured.Unstructured) []metav1.Condition {
	raw, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	var out []metav1.Condition
	for _, r := range raw {
		var c metav1.Condition
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(r.(map[string]any), &c)).To(gomega.Succeed())
		out = append(out, c)
	}
	return out
}

// isTrue reports whether obj's condition typ is True.
func isTrue(g gomega.Gomega, obj *unstructured.Unstructured, typ string) bool {
	return meta.IsStatusConditionTrue(conditions(g, obj), typ)
}

// checkState is the state of the Workload's admission check name.
func checkState(g gomega.Gomega, wl *unstructured.Unstructured, name string) string {
	return checkField(g, wl, name, "state")
}

// checkMessage is the message of the Workload's admission check name.
func checkMessage(g gomega.Gomega, wl *unstructured.Unstructured, name string) string {
	return checkField(g, wl, name, "message")
}

func checkField(g gomega.Gomega, wl *unstructured.Unstructured, name, field string) string {
	checks, _, err := unstructured.NestedSlice(wl.Object, "status", "admissionChecks")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, c := range checks {
		check := c.(map[string]any)
		if check["name"] == name {
			value, _ := check[field].(string)
			return value
		}
	}
	return ""
}

// nodeClaims are the scenario's NodeClaims.
func (s *scenario) nodeClaims() []v1.NodeClaim { return test.NodeClaimsOf(cluster.Client, s.np.Name) }

// in is a requirement that key is one of values.
func in(key string, values ...string) v1.NodeSelectorRequirementWithMinValues {
	return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}
