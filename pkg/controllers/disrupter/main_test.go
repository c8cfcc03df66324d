package disrupter

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/test"
)

// env is the real kube-apiserver the package's tests share. The
// disruption controller reads the whole cluster, so every test starts
// from, and leaves, a cluster without NodePools, NodeClaims, Nodes or
// pods (see reset); tests must not run in parallel.
var env *test.Environment

func TestMain(m *testing.M) {
	os.Exit(test.MainWithEnvironment(m, func(e *test.Environment) { env = e }))
}

// Test timings: a poll interval longer than the validation delay, so
// RequeueAfter says which one the controller waits for.
const (
	pollInterval       = time.Minute
	validationDelay    = 15 * time.Second
	replacementTimeout = 20 * time.Minute
)

// harness is one test's disruption controller over the shared control
// plane: the fake cloud offers 4-core m5.xlarge, the clock is fake and
// events land in a fake recorder.
type harness struct {
	t       *testing.T
	g       gomega.Gomega
	ctx     context.Context
	c       client.Client
	clk     *clocktesting.FakeClock
	rec     *events.FakeRecorder
	cloud   *fake.CloudProvider
	metrics *Metrics
	ctrl    *Controller
	ns      string
}

func newHarness(t *testing.T, drift bool) *harness {
	t.Helper()
	h := &harness{t: t, g: test.NewGomega(t), ctx: context.Background(), c: env.Client}
	h.reset()
	t.Cleanup(h.reset)
	h.ns = test.Namespace(t, h.c)
	// Ahead of the API server's clock, so objects created during the test
	// are already older than a consolidateAfter of 0s.
	h.clk = clocktesting.NewFakeClock(time.Now().Add(time.Minute).Truncate(time.Second))
	h.rec = events.NewFakeRecorder(1000)
	h.cloud = fake.New(test.InstanceType(test.InstanceTypeOptions{Name: "m5.xlarge", CPU: 4, Memory: 16}))
	cluster := &clusterstate.Cluster{Client: h.c, Cloud: h.cloud, SchedulerNames: []string{corev1.DefaultSchedulerName}}
	metrics, err := NewMetrics(prometheus.NewRegistry())
	h.g.Expect(err).NotTo(gomega.HaveOccurred())
	h.metrics = metrics
	h.ctrl = New(Deps{Reader: h.c, Cluster: cluster, Applier: h.newApplier(nil), Clock: h.clk, Metrics: metrics}, Options{
		PollInterval: pollInterval, ValidationDelay: validationDelay, ReplacementTimeout: replacementTimeout, Gates: disruption.Gates{Drift: drift},
	})
	return h
}

// reset deletes every Pod, NodeClaim, Node and NodePool, finalizers
// stripped, and waits until they are gone.
func (h *harness) reset() {
	ctx, g := h.ctx, gomega.NewWithT(h.t)
	pods := &corev1.PodList{}
	g.Expect(h.c.List(ctx, pods)).To(gomega.Succeed())
	for i := range pods.Items {
		g.Expect(client.IgnoreNotFound(h.c.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0)))).To(gomega.Succeed())
	}
	ncs := &v1.NodeClaimList{}
	g.Expect(h.c.List(ctx, ncs)).To(gomega.Succeed())
	for i := range ncs.Items {
		h.release(&ncs.Items[i])
	}
	nodes := &corev1.NodeList{}
	g.Expect(h.c.List(ctx, nodes)).To(gomega.Succeed())
	for i := range nodes.Items {
		h.release(&nodes.Items[i])
	}
	nps := &v1.NodePoolList{}
	g.Expect(h.c.List(ctx, nps)).To(gomega.Succeed())
	for i := range nps.Items {
		h.release(&nps.Items[i])
	}
	g.Eventually(func(g gomega.Gomega) {
		for _, l := range []client.ObjectList{&corev1.PodList{}, &v1.NodeClaimList{}, &corev1.NodeList{}, &v1.NodePoolList{}} {
			g.Expect(h.c.List(ctx, l)).To(gomega.Succeed())
			g.Expect(meta.LenList(l)).To(gomega.BeZero(), "%T left over", l)
		}
	}).WithTimeout(test.EventuallyTimeout).WithPolling(test.PollInterval).Should(gomega.Succeed())
}

// release strips obj's finalizers and deletes it.
func (h *harness) release(obj client.Object) {
	if len(obj.GetFinalizers()) > 0 {
		patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
		obj.SetFinalizers(nil)
		h.g.Expect(client.IgnoreNotFound(h.c.Patch(h.ctx, obj, patch))).To(gomega.Succeed())
	}
	h.g.Expect(client.IgnoreNotFound(h.c.Delete(h.ctx, obj))).To(gomega.Succeed())
}

// nodePool creates a NodePool offering everything, consolidateAfter 0s
// and a budget of 100%, as mods leave it.
func (h *harness) nodePool(mods ...func(*v1.NodePool)) *v1.NodePool {
	np := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("0s")
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "100%"}}
	})
	for _, mod := range mods {
		mod(np)
	}
	h.g.Expect(h.c.Create(h.ctx, np)).To(gomega.Succeed())
	return np
}

func condition(typ, reason string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(at)}
}

// node creates an initialized NodeClaim of np (termination finalizer on)
// and its Ready Node with cpu cores, 16Gi and 110 pods; mods edit the
// NodeClaim's status (conditions) and the Node before they are written.
func (h *harness) node(np *v1.NodePool, cpu string, mods ...func(*v1.NodeClaim, *corev1.Node)) (*v1.NodeClaim, *corev1.Node) {
	h.t.Helper()
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Labels = map[string]string{v1.NodePoolLabelKey: np.Name, v1.LabelInstanceType: "m5.xlarge"}
		nc.Finalizers = []string{v1.TerminationFinalizer}
	})
	allocatable := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110"),
	}
	node := test.KwokNode(func(n *corev1.Node) {
		n.Labels[v1.NodePoolLabelKey] = np.Name
		n.Labels[v1.LabelInstanceType] = "m5.xlarge"
		n.Spec.ProviderID = "fake://zone-a/" + nc.Name
		n.Status = corev1.NodeStatus{Capacity: allocatable, Allocatable: allocatable,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}}
	})
	nc.Status = v1.NodeClaimStatus{ProviderID: node.Spec.ProviderID, NodeName: node.Name, Capacity: allocatable, Allocatable: allocatable,
		Conditions: []metav1.Condition{
			condition(v1.ConditionTypeLaunched, "Launched", h.clk.Now()),
			condition(v1.ConditionTypeRegistered, "Registered", h.clk.Now()),
			condition(v1.ConditionTypeInitialized, "Initialized", h.clk.Now()),
		}}
	for _, mod := range mods {
		mod(nc, node)
	}
	status := nc.Status
	h.g.Expect(h.c.Create(h.ctx, nc)).To(gomega.Succeed())
	nc.Status = status
	h.g.Expect(h.c.Status().Update(h.ctx, nc)).To(gomega.Succeed())
	nodeStatus, taints := node.Status, node.Spec.Taints
	h.g.Expect(h.c.Create(h.ctx, node)).To(gomega.Succeed())
	// The API server taints a new node node.kubernetes.io/not-ready, which
	// the node lifecycle controller (absent here) removes once it is Ready.
	node.Spec.Taints = taints
	h.g.Expect(h.c.Update(h.ctx, node)).To(gomega.Succeed())
	node.Status = nodeStatus
	h.g.Expect(h.c.Status().Update(h.ctx, node)).To(gomega.Succeed())
	return nc, node
}

// drifted marks a NodeClaim Drifted since now.
func (h *harness) drifted(nc *v1.NodeClaim, _ *corev1.Node) {
	meta.SetStatusCondition(&nc.Status.Conditions, condition(v1.ConditionTypeDrifted, "NodePoolDrifted", h.clk.Now()))
}

// pod binds a pod requesting cpu cores to node.
func (h *harness) pod(node *corev1.Node, cpu string) *corev1.Pod {
	p := test.Pod(h.ns, func(p *corev1.Pod) {
		p.Spec.NodeName = node.Name
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	})
	h.g.Expect(h.c.Create(h.ctx, p)).To(gomega.Succeed())
	return p
}

// reconcile runs one evaluation, which must succeed.
func (h *harness) reconcile() reconcile.Result {
	h.t.Helper()
	res, err := h.ctrl.Reconcile(h.ctx, singleton())
	h.g.Expect(err).NotTo(gomega.HaveOccurred())
	return res
}

// events drains the events recorded so far.
func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// eventsAbout are the drained events containing s.
func eventsAbout(events []string, s string) []string {
	var out []string
	for _, e := range events {
		if strings.Contains(e, s) {
			out = append(out, e)
		}
	}
	return out
}

func (h *harness) getNodeClaim(nc *v1.NodeClaim) *v1.NodeClaim {
	out := &v1.NodeClaim{}
	h.g.Expect(h.c.Get(h.ctx, client.ObjectKeyFromObject(nc), out)).To(gomega.Succeed())
	return out
}

func (h *harness) getNode(n *corev1.Node) *corev1.Node {
	out := &corev1.Node{}
	h.g.Expect(h.c.Get(h.ctx, client.ObjectKeyFromObject(n), out)).To(gomega.Succeed())
	return out
}

// tainted reports whether the node carries karpenter.sh/disrupted:NoSchedule.
func (h *harness) tainted(n *corev1.Node) bool {
	taint := v1.DisruptedNoScheduleTaint()
	for _, t := range h.getNode(n).Spec.Taints {
		if t.MatchTaint(&taint) {
			return true
		}
	}
	return false
}

// singleton is the one request the controller reconciles.
func singleton() reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Name: "disruption"}}
}

// newApplier is the controller's applier over the test's client, fake
// recorder and cloud, its counters the harness's metrics.
func (h *harness) newApplier(unavailable *cloudprovider.UnavailableOfferings) *apply.Applier {
	counters := apply.NewCounters()
	h.metrics.Counters(counters)
	return apply.New(apply.Deps{Client: h.c, Recorder: h.rec, Cloud: h.cloud, Unavailable: unavailable, Counters: counters, Clock: h.clk})
}
