package explainserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/controllers/explainserver"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/test"
)

func get(g gomega.Gomega, srv *httptest.Server, path string, into any) int {
	resp, err := http.Get(srv.URL + path)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusOK {
		g.Expect(json.NewDecoder(resp.Body).Decode(into)).To(gomega.Succeed())
	}
	return resp.StatusCode
}

// The server answers from the API server's objects and the cloud's
// instance types: a pod too big for its NodePool's limit, the NodePool's
// use and cost, a node by its Node's name.
func TestServer(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := env.Client
	ns := test.Namespace(t, c)
	cloud := fake.New(test.InstanceType(test.InstanceTypeOptions{Name: "m.xlarge", CPU: 4, Memory: 16, Price: 0.2}))
	np := test.NodePool(func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("6")} })
	g.Expect(c.Create(ctx, np)).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, np) })

	// One launched node: 4 of the 6 CPUs used.
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Labels = map[string]string{v1.NodePoolLabelKey: np.Name}
		nc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	})
	launched, err := cloud.Create(ctx, nc)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	nc.Labels = launched.Labels
	g.Expect(c.Create(ctx, nc)).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, nc) })
	nc.Status = launched.Status
	nc.Status.NodeName = "node-" + nc.Name
	g.Expect(c.Status().Update(ctx, nc)).To(gomega.Succeed())

	pod := test.Pod(ns, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
	})
	g.Expect(c.Create(ctx, pod)).To(gomega.Succeed())
	// Namespaces outlive envtest's tests: a pending pod left behind
	// would be nominated to other tests' nodes.
	t.Cleanup(func() { _ = c.Delete(ctx, pod) })
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	g.Expect(c.Status().Update(ctx, pod)).To(gomega.Succeed())

	clk := clocktesting.NewFakeClock(time.Now())
	cluster := &clusterstate.Cluster{Client: c, Cloud: cloud, SchedulerNames: []string{corev1.DefaultSchedulerName}}
	srv := httptest.NewServer(explainserver.New(explainserver.Deps{Reader: c, Cluster: cluster, Clock: clk}, explainserver.Options{SchedulerNames: cluster.SchedulerNames}).Handler())
	defer srv.Close()
	// Explain only reads: it answers from the instance types the
	// provisioner's last snapshot got from the cloud.
	_, err = cluster.Snapshot(ctx)
	g.Expect(err).NotTo(gomega.HaveOccurred())

	var p explain.Pod
	g.Expect(get(g, srv, explainserver.Path+"pod/"+ns+"/"+pod.Name, &p)).To(gomega.Equal(http.StatusOK))
	g.Expect(p.Considered).To(gomega.BeTrue())
	var verdict explain.PoolVerdict
	for _, v := range p.NodePools {
		if v.NodePool == np.Name {
			verdict = v
		}
	}
	g.Expect(verdict.Reason).To(gomega.Equal("NodePoolLimitExceeded"), "%+v", p)
	g.Expect(verdict.Limits).To(gomega.Equal([]explain.Limit{{Resource: "cpu", Used: "4", Limit: "6"}}))

	var pool explain.NodePool
	g.Expect(get(g, srv, explainserver.Path+"nodepool/"+np.Name, &pool)).To(gomega.Equal(http.StatusOK))
	g.Expect(pool.Nodes).To(gomega.HaveLen(1))
	g.Expect(pool.CostPerHour).NotTo(gomega.BeNil())
	g.Expect(*pool.CostPerHour).To(gomega.BeNumerically(">", 0))

	var node explain.Node
	g.Expect(get(g, srv, explainserver.Path+"node/node-"+nc.Name, &node)).To(gomega.Equal(http.StatusOK))
	g.Expect(node.NodeClaim).To(gomega.Equal(nc.Name))
	// No Node object registered it.
	g.Expect(node.Candidate).To(gomega.BeFalse())
	g.Expect(node.DisruptionStatus).To(gomega.Equal(explain.DisruptionNotCandidate))
	g.Expect(node.Disruption).To(gomega.Equal("not a disruption candidate: its Node node-" + nc.Name + " is not in the cluster"))

	g.Expect(get(g, srv, explainserver.Path+"pod/"+ns+"/missing", nil)).To(gomega.Equal(http.StatusNotFound))
	g.Expect(get(g, srv, explainserver.Path+"node/missing", nil)).To(gomega.Equal(http.StatusNotFound))
}

// Explain never calls the cloud: a NodePool the provisioner has not
// snapshotted yet is reported as such, and the cloud sees no call.
func TestServerOnlyReads(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := env.Client
	ns := test.Namespace(t, c)
	cloud := fake.New(test.InstanceType(test.InstanceTypeOptions{Name: "m.xlarge", CPU: 4, Memory: 16, Price: 0.2}))
	np := test.NodePool()
	g.Expect(c.Create(ctx, np)).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, np) })
	pod := test.Pod(ns)
	g.Expect(c.Create(ctx, pod)).To(gomega.Succeed())

	cluster := &clusterstate.Cluster{Client: c, Cloud: cloud, SchedulerNames: []string{corev1.DefaultSchedulerName}}
	srv := httptest.NewServer(explainserver.New(explainserver.Deps{Reader: c, Cluster: cluster, Clock: clocktesting.NewFakeClock(time.Now())}, explainserver.Options{SchedulerNames: cluster.SchedulerNames}).Handler())
	defer srv.Close()
	var p explain.Pod
	g.Expect(get(g, srv, explainserver.Path+"pod/"+ns+"/"+pod.Name, &p)).To(gomega.Equal(http.StatusOK))
	var pool explain.NodePool
	g.Expect(get(g, srv, explainserver.Path+"nodepool/"+np.Name, &pool)).To(gomega.Equal(http.StatusOK))
	g.Expect(cloud.GetInstanceTypesCalls).To(gomega.BeEmpty(), "explain asked the cloud")
	g.Expect(cloud.ListCalls).To(gomega.BeZero(), "explain asked the cloud")
}

// The node's disruption answer runs the controller's methods with its
// Drift gate over the read-only snapshot: an empty drifted node goes by
// Drift with the gate on, by Emptiness with it off, and a pending pod
// it could take blocks it; the NodePool says what its budgets allow.
func TestServerExplainsDisruption(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := env.Client
	cloud := fake.New(test.InstanceType(test.InstanceTypeOptions{Name: "m.xlarge", CPU: 4, Memory: 16, Price: 0.2}))
	np := test.NodePool()
	g.Expect(c.Create(ctx, np)).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, np) })

	node := test.KwokNode(func(n *corev1.Node) {
		n.Labels[v1.NodePoolLabelKey] = np.Name
		n.Spec.ProviderID = "sim://" + n.Name
	})
	status := node.Status
	g.Expect(c.Create(ctx, node)).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, node) })
	// Admission taints a new node not-ready; it is.
	node.Spec.Taints = nil
	g.Expect(c.Update(ctx, node)).To(gomega.Succeed())
	// Creating leaves the status out: room for pods, and Ready.
	node.Status = status
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	g.Expect(c.Status().Update(ctx, node)).To(gomega.Succeed())

	nc := test.NodeClaim(func(nc *v1.NodeClaim) { nc.Labels = map[string]string{v1.NodePoolLabelKey: np.Name} })
	g.Expect(c.Create(ctx, nc)).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, nc) })
	nc.Status.NodeName, nc.Status.ProviderID = node.Name, node.Spec.ProviderID
	for _, ct := range []string{v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized} {
		meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: ct, Status: metav1.ConditionTrue, Reason: ct})
	}
	meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue,
		Reason: disruption.DriftNodePool, Message: "the NodePool's template changed since the node was launched"})
	g.Expect(c.Status().Update(ctx, nc)).To(gomega.Succeed())

	cluster := &clusterstate.Cluster{Client: c, Cloud: cloud, SchedulerNames: []string{corev1.DefaultSchedulerName}}
	explainNode := func(drift bool) explain.Node {
		srv := httptest.NewServer(explainserver.New(explainserver.Deps{Reader: c, Cluster: cluster, Clock: clocktesting.NewFakeClock(time.Now())}, explainserver.Options{SchedulerNames: cluster.SchedulerNames, Drift: drift}).Handler())
		defer srv.Close()
		var answer explain.Node
		g.Expect(get(g, srv, explainserver.Path+"node/"+node.Name, &answer)).To(gomega.Equal(http.StatusOK))
		return answer
	}
	got := explainNode(true)
	g.Expect(got.Candidate).To(gomega.BeTrue())
	g.Expect(got.DisruptionStatus).To(gomega.Equal(explain.DisruptionNext), got.Disruption)
	g.Expect([]string{got.DisruptionMethod, got.DisruptionReason}).To(gomega.Equal([]string{"Drift", "Drifted"}))
	g.Expect(got.Drifted).NotTo(gomega.BeNil())
	g.Expect(got.Drifted.Reason).To(gomega.Equal(disruption.DriftNodePool))
	g.Expect(got.Pods).To(gomega.Equal(ptr.To(0)))
	got = explainNode(false)
	g.Expect(got.DisruptionStatus).To(gomega.Equal(explain.DisruptionNext), got.Disruption)
	g.Expect([]string{got.DisruptionMethod, got.DisruptionReason}).To(gomega.Equal([]string{"Emptiness", "Empty"}))

	// A pending pod the node could take.
	ns := test.Namespace(t, c)
	pod := test.Pod(ns)
	g.Expect(c.Create(ctx, pod)).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, pod) })
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	g.Expect(c.Status().Update(ctx, pod)).To(gomega.Succeed())
	got = explainNode(true)
	g.Expect(got.DisruptionStatus).To(gomega.Equal(explain.DisruptionBlocked), got.Disruption)
	g.Expect(got.DisruptionBlockedBy).To(gomega.Equal("node is nominated for a pending pod"))

	// The default budget, 10% of one node, allows one disruption per reason.
	srv := httptest.NewServer(explainserver.New(explainserver.Deps{Reader: c, Cluster: cluster, Clock: clocktesting.NewFakeClock(time.Now())}, explainserver.Options{Drift: true}).Handler())
	defer srv.Close()
	var pool explain.NodePool
	g.Expect(get(g, srv, explainserver.Path+"nodepool/"+np.Name, &pool)).To(gomega.Equal(http.StatusOK))
	g.Expect(pool.DisruptionsAllowed).To(gomega.Equal(map[string]int{"Empty": 1, "Drifted": 1, "Underutilized": 1}))
	g.Expect(pool.Disrupting).To(gomega.BeZero())
	g.Expect(cloud.GetInstanceTypesCalls).To(gomega.BeEmpty(), "explain asked the cloud")
}
