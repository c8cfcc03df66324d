//go:build e2e

package termination

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/invariants"
	"github.com/capstan-dev/capstan/test/parity"
)

const replicas = 4

// workload is a scenario: a NodePool whose nodes only this test's pods
// tolerate, a 4-replica deployment and a PDB allowing one disruption. It
// returns the scenario's namespace, NodePool and its parity check, which
// has seen the objects created.
func workload(t *testing.T, mods ...func(*v1.NodePool)) (string, *v1.NodePool, *scene) {
	t.Helper()
	ctx := context.Background()
	g := test.NewGomega(t)
	c := cluster.Client
	ns := test.Namespace(t, c)
	snc := test.SimNodeClass()
	np := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = snc.Name
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "scenario", Value: ns, Effect: corev1.TaintEffectNoSchedule}}
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.xlarge"}}}
		for _, m := range mods {
			m(np)
		}
	})
	sc := &scene{ns: ns, parity: parity.ForCluster(t, filepath.Join(cluster.Root, "sim-state.json"), controllerArgs(), np.Name)}
	labels := map[string]string{"app": "guarded"}
	pod := test.Pod(ns, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")}
		p.Spec.Tolerations = []corev1.Toleration{{Key: "scenario", Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
	})
	for _, o := range []client.Object{snc, np,
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: ns}, Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: ns}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec}}},
	} {
		g.Expect(c.Create(ctx, o)).To(gomega.Succeed())
		sc.parity.Apply(t, o)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, np); _ = c.Delete(ctx, snc) })
	sc.seen = parity.Observe(t, cluster.Config, cluster.Scheme, ns, np.Name)
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(running(ns)).To(gomega.Equal(replicas))
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	return ns, np, sc
}

// scene is a scenario's parity check: the scenario as simulate input and
// what was seen of its NodeClaims.
type scene struct {
	ns     string
	parity *parity.Scenario
	seen   *invariants.Checker
}

// checkParity runs the scenario so far through `capstan simulate` and
// compares its outcome with the cluster's (docs/simulate.md).
func (s *scene) checkParity(t *testing.T, known ...parity.Known) {
	t.Helper()
	s.parity.Check(t, func() parity.Outcome { return parity.FromChecker(s.seen, running(s.ns)) }, known...)
}

// running counts the namespace's Running pods that are not terminating.
func running(ns string) int {
	pods := &corev1.PodList{}
	if err := cluster.Client.List(context.Background(), pods, client.InNamespace(ns)); err != nil {
		return -1
	}
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// guardBudget watches the workload continuously while it is disrupted and
// records the fewest running pods seen; the PDB allows one fewer than all.
func guardBudget(t *testing.T, ns string) *atomic.Int64 {
	fewest := &atomic.Int64{}
	fewest.Store(replicas)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			if n := running(ns); n >= 0 && int64(n) < fewest.Load() {
				fewest.Store(int64(n))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return fewest
}

func claimsOf(np *v1.NodePool) []v1.NodeClaim {
	list := &v1.NodeClaimList{}
	_ = cluster.Client.List(context.Background(), list, client.MatchingLabels{v1.NodePoolLabelKey: np.Name})
	return list.Items
}

func instanceRunning(providerID string) bool {
	s, err := sim.LoadState(filepath.Join(cluster.Root, "sim-state.json"))
	if err != nil {
		return true
	}
	for _, inst := range s.Instances {
		if inst.ProviderID() == providerID {
			return inst.State != sim.InstanceTerminated
		}
	}
	return false
}

// drainsAway deletes one node's NodeClaim or Node and checks the whole
// termination: drained within the PDB, pods elsewhere, instance and Node
// gone.
func drainsAway(t *testing.T, deleteNode bool) {
	ctx := context.Background()
	g := test.NewGomega(t)
	ns, np, _ := workload(t)
	victim := claimsOf(np)[0]
	fewest := guardBudget(t, ns)
	node := &corev1.Node{}
	g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Name: victim.Status.NodeName}, node)).To(gomega.Succeed())
	if deleteNode {
		g.Expect(cluster.Client.Delete(ctx, node)).To(gomega.Succeed())
	} else {
		g.Expect(cluster.Client.Delete(ctx, &victim)).To(gomega.Succeed())
	}
	g.Eventually(func() bool {
		return errors.IsNotFound(cluster.Client.Get(ctx, client.ObjectKeyFromObject(&victim), &v1.NodeClaim{})) &&
			errors.IsNotFound(cluster.Client.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{}))
	}).WithTimeout(90 * time.Second).Should(gomega.BeTrue())
	g.Expect(instanceRunning(victim.Status.ProviderID)).To(gomega.BeFalse(), "instance %s still runs", victim.Status.ProviderID)
	g.Eventually(func() int { return running(ns) }).WithTimeout(60 * time.Second).Should(gomega.Equal(replicas))
	if got := fewest.Load(); got < replicas-1 {
		t.Errorf("only %d pods ran at one point; the PDB allows %d", got, replicas-1)
	}
}

func TestDeletingANodeClaimDrainsIt(t *testing.T) { drainsAway(t, false) }

func TestDeletingANodeDrainsIt(t *testing.T) { drainsAway(t, true) }

// With the NodePool gone its pods have nowhere to go, so the PDB would hold
// the drain for ever; the terminationGracePeriod ends it.
func TestDeletingANodePoolTerminatesItsNodes(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	_, np, sc := workload(t, func(np *v1.NodePool) {
		np.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: 15 * time.Second}
	})
	claims := claimsOf(np)
	g.Expect(cluster.Client.Delete(ctx, np)).To(gomega.Succeed())
	sc.parity.Delete(t, np)
	g.Eventually(func() int { return len(claimsOf(np)) }).WithTimeout(90 * time.Second).Should(gomega.Equal(0))
	for _, nc := range claims {
		g.Expect(instanceRunning(nc.Status.ProviderID)).To(gomega.BeFalse())
		g.Expect(errors.IsNotFound(cluster.Client.Get(ctx, client.ObjectKey{Name: nc.Status.NodeName}, &corev1.Node{}))).To(gomega.BeTrue())
	}
	sc.checkParity(t, parity.GracePeriodEnd)
}

// The controller dies right after the cloud launched an instance, before
// the NodeClaim records it. Restarted, it launches again; garbage
// collection terminates the leaked instance; no NodeClaim is duplicated.
func TestCrashBetweenLaunchAndRecordLeaksNothing(t *testing.T) {
	g := test.NewGomega(t)
	g.Expect(os.WriteFile(crashFile(), nil, 0o600)).To(gomega.Succeed())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, np, _ := workload(t)
		g.Expect(claimsOf(np)).To(gomega.HaveLen(1), "one NodeClaim for four small pods, not a duplicate")
	}()
	g.Eventually(func() bool {
		exited, _ := cluster.Exited("capstan")
		return exited
	}).WithTimeout(60*time.Second).Should(gomega.BeTrue(), "the controller did not reach the crash point")
	_, err := cluster.StartCapstan(controllerArgs()...)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	<-done
	g.Eventually(func(g gomega.Gomega) {
		s, err := sim.LoadState(filepath.Join(cluster.Root, "sim-state.json"))
		g.Expect(err).NotTo(gomega.HaveOccurred())
		claims := &v1.NodeClaimList{}
		g.Expect(cluster.Client.List(context.Background(), claims)).To(gomega.Succeed())
		owned := map[string]bool{}
		for _, nc := range claims.Items {
			owned[nc.Status.ProviderID] = true
		}
		for _, inst := range s.Instances {
			if inst.State != sim.InstanceTerminated {
				g.Expect(owned[inst.ProviderID()]).To(gomega.BeTrue(), "instance %s runs without a NodeClaim", inst.ID)
			}
		}
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
}
