//go:build e2e

package provisioning

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/invariants"
	"github.com/capstan-dev/capstan/test/parity"
)

// scene is a scenario's world: its namespace, its NodePool, the scenario
// as simulate input and what was seen of its NodeClaims.
type scene struct {
	ns     string
	np     *v1.NodePool
	parity *parity.Scenario
	seen   *invariants.Checker
}

// scenario creates a SimNodeClass and a NodePool whose nodes carry a taint
// only this scenario's pods tolerate, so scenarios sharing the cluster keep
// to their own nodes.
func scenario(t *testing.T, mods ...func(*v1.NodePool)) *scene {
	t.Helper()
	ctx := context.Background()
	c := cluster.Client
	ns := test.Namespace(t, c)
	snc := test.SimNodeClass()
	np := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = snc.Name
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "scenario", Value: ns, Effect: corev1.TaintEffectNoSchedule}}
	})
	for _, m := range mods {
		m(np)
	}
	s := &scene{ns: ns, np: np, parity: parity.ForCluster(t, filepath.Join(cluster.Root, "sim-state.json"), controllerArgs(), np.Name)}
	s.create(t, snc, np)
	t.Cleanup(func() {
		_ = c.Delete(ctx, np)
		_ = c.Delete(ctx, snc)
	})
	s.seen = parity.Observe(t, cluster.Config, cluster.Scheme, ns, np.Name)
	return s
}

// create creates objs in the cluster and records them for simulate.
func (s *scene) create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := cluster.Client.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		s.parity.Apply(t, o)
	}
}

// checkParity runs the scenario so far through `capstan simulate` and
// compares its outcome with the cluster's, but for known differences
// (docs/simulate.md lists them).
func (s *scene) checkParity(t *testing.T, known ...parity.Known) {
	t.Helper()
	s.parity.Check(t, func() parity.Outcome { return parity.FromChecker(s.seen, len(test.RunningPods(cluster.Client, s.ns))) }, known...)
}

func deployment(ns string, replicas int32, cpu, mem string) *appsv1.Deployment {
	labels := map[string]string{"app": "web-" + cpu}
	pod := test.Pod(ns, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
		p.Spec.Tolerations = []corev1.Toleration{{Key: "scenario", Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
	})
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: labels["app"], Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec},
		},
	}
}

func nodeClaimsOf(g gomega.Gomega, np *v1.NodePool) []v1.NodeClaim {
	list := &v1.NodeClaimList{}
	g.Expect(cluster.Client.List(context.Background(), list, client.MatchingLabels{v1.NodePoolLabelKey: np.Name})).To(gomega.Succeed())
	return list.Items
}

// Mixed deployments get nodes, the real kube-scheduler binds every pod to
// them, and no launched node is left empty.
func TestPendingPodsGetNodes(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	sc := scenario(t)
	ns, np := sc.ns, sc.np
	sc.create(t, deployment(ns, 20, "500m", "512Mi"), deployment(ns, 10, "1500m", "2Gi"), deployment(ns, 5, "100m", "4Gi"))
	g.Eventually(func(g gomega.Gomega) {
		pods := &corev1.PodList{}
		g.Expect(cluster.Client.List(ctx, pods, client.InNamespace(ns))).To(gomega.Succeed())
		g.Expect(pods.Items).To(gomega.HaveLen(35))
		for _, p := range pods.Items {
			g.Expect(p.Status.Phase).To(gomega.Equal(corev1.PodRunning), "pod %s", p.Name)
		}
	}).WithTimeout(90 * time.Second).Should(gomega.Succeed())

	claims := nodeClaimsOf(g, np)
	g.Expect(claims).NotTo(gomega.BeEmpty())
	pods := &corev1.PodList{}
	g.Expect(cluster.Client.List(ctx, pods, client.InNamespace(ns))).To(gomega.Succeed())
	used := map[string]bool{}
	for _, p := range pods.Items {
		used[p.Spec.NodeName] = true
	}
	for _, nc := range claims {
		g.Expect(nc.Status.NodeName).NotTo(gomega.BeEmpty())
		g.Expect(used[nc.Status.NodeName]).To(gomega.BeTrue(), "node %s of nodeclaim %s is empty", nc.Status.NodeName, nc.Name)
		g.Expect(nc.Labels[v1.NodePoolLabelKey]).To(gomega.Equal(np.Name))
		g.Expect(nc.Annotations[v1.NodePoolHashAnnotationKey]).To(gomega.Equal(np.Hash()))
	}
	// Pods binding stamped the NodeClaims (consolidateAfter counts from it).
	g.Eventually(func(g gomega.Gomega) {
		for _, nc := range nodeClaimsOf(g, np) {
			g.Expect(nc.Status.LastPodEventTime.IsZero()).To(gomega.BeFalse(), "nodeclaim %s", nc.Name)
		}
	}).Should(gomega.Succeed())
	// The NodePool reports its nodes and is Ready.
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(np), np)).To(gomega.Succeed())
		nodes := np.Status.Resources[corev1.ResourceName("nodes")]
		g.Expect(nodes.Value()).To(gomega.Equal(int64(len(claims))))
		g.Expect(meta.IsStatusConditionTrue(np.Status.Conditions, v1.ConditionTypeReady)).To(gomega.BeTrue())
	}).Should(gomega.Succeed())
	sc.checkParity(t)
}

// The controller's metrics describe the NodeClaims and what they cost.
func TestMetrics(t *testing.T) {
	g := test.NewGomega(t)
	sc := scenario(t)
	np := sc.np
	sc.create(t, deployment(sc.ns, 1, "1", "1Gi"))
	g.Eventually(func(g gomega.Gomega) {
		claims := nodeClaimsOf(g, np)
		g.Expect(claims).To(gomega.HaveLen(1))
		g.Expect(claims[0].Status.NodeName).NotTo(gomega.BeEmpty())
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		resp, err := http.Get(metricsURL)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		for _, m := range []string{`capstan_nodeclaims{nodepool="` + np.Name, `capstan_nodepool_cost_per_hour{nodepool="` + np.Name, "capstan_nodeclaims_created_total{", "capstan_cloudprovider_duration_seconds_bucket{"} {
			g.Expect(string(body)).To(gomega.ContainSubstring(m))
		}
	}).Should(gomega.Succeed())
	sc.checkParity(t)
}

// A pod for a second scheduler (an llmaz-style custom scheduler, decision
// 10) is provisioned for when that scheduler name is configured, and that
// scheduler binds it.
func TestSecondSchedulerPodsGetNodes(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	sc := scenario(t)
	ns := sc.ns
	d := deployment(ns, 2, "1", "1Gi")
	d.Spec.Template.Spec.SchedulerName = test.SecondSchedulerName
	sc.create(t, d)
	g.Eventually(func(g gomega.Gomega) {
		pods := &corev1.PodList{}
		g.Expect(cluster.Client.List(ctx, pods, client.InNamespace(ns))).To(gomega.Succeed())
		g.Expect(pods.Items).To(gomega.HaveLen(2))
		for _, p := range pods.Items {
			g.Expect(p.Status.Phase).To(gomega.Equal(corev1.PodRunning))
		}
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	sc.checkParity(t)
}

// Seed 003: spot for c4.xlarge is out everywhere; the NodeClaim that tried
// spot is replaced at once by an on-demand one, and the pod runs.
func TestSpotShortageFallsBackToOnDemand(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	sc := scenario(t, func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"c4.xlarge"}},
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}},
		}
	})
	np := sc.np
	sc.create(t, deployment(sc.ns, 1, "1", "1Gi"))
	g.Eventually(func(g gomega.Gomega) {
		claims := nodeClaimsOf(g, np)
		g.Expect(claims).To(gomega.HaveLen(1))
		g.Expect(claims[0].Labels[v1.CapacityTypeLabelKey]).To(gomega.Equal(v1.CapacityTypeOnDemand))
		g.Expect(claims[0].Labels[v1.LabelInstanceType]).To(gomega.Equal("c4.xlarge"))
		g.Expect(claims[0].Status.NodeName).NotTo(gomega.BeEmpty())
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	events := &corev1.EventList{}
	g.Expect(cluster.Client.List(ctx, events)).To(gomega.Succeed())
	found := false
	for _, e := range events.Items {
		found = found || e.Reason == "InsufficientCapacity"
	}
	g.Expect(found).To(gomega.BeTrue(), "no InsufficientCapacity event names the failed offerings")
	sc.checkParity(t)
}

// NodePool limits stop provisioning; the pods left over say why.
func TestLimitsStopProvisioning(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	sc := scenario(t, func(np *v1.NodePool) {
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("4")}
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"c5.xlarge"}},
		}
	})
	ns, np := sc.ns, sc.np
	sc.create(t, deployment(ns, 6, "1500m", "1Gi"))
	g.Eventually(func(g gomega.Gomega) {
		events := &corev1.EventList{}
		g.Expect(cluster.Client.List(ctx, events, client.InNamespace(ns))).To(gomega.Succeed())
		reasons := map[string]bool{}
		for _, e := range events.Items {
			reasons[e.Reason] = true
		}
		g.Expect(reasons).To(gomega.HaveKey("NodePoolLimitExceeded"))
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	g.Consistently(func(g gomega.Gomega) {
		g.Expect(len(nodeClaimsOf(g, np))).To(gomega.BeNumerically("<=", 1))
	}).WithTimeout(3 * time.Second).Should(gomega.Succeed())
	sc.checkParity(t)
}
