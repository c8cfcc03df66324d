package provisioner

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/test"
)

var window = scaleup.Window{Idle: time.Second, Max: 10 * time.Second}

// harness is one test's provisioner over the shared control plane: the
// fake cloud offers 4-core m5.xlarge, the clock is fake and events land
// in a fake recorder. Tests call Reconcile themselves.
type harness struct {
	t   *testing.T
	g   gomega.Gomega
	ctx context.Context
	c   client.Client
	clk *clocktesting.FakeClock
	rec *events.FakeRecorder
	p   *Provisioner
	ns  string
	np  *v1.NodePool
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, g: test.NewGomega(t), ctx: context.Background(), c: env.Client}
	h.reset()
	t.Cleanup(h.reset)
	h.ns = test.Namespace(t, h.c)
	h.clk = clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h.rec = events.NewFakeRecorder(1000)
	cloud := fake.New(test.InstanceType(test.InstanceTypeOptions{Name: "m5.xlarge", CPU: 4, Memory: 16}))
	cluster := &clusterstate.Cluster{Client: h.c, Cloud: cloud, SchedulerNames: []string{corev1.DefaultSchedulerName}}
	metrics, err := NewMetrics(prometheus.NewRegistry())
	h.g.Expect(err).NotTo(gomega.HaveOccurred())
	h.p = New(Deps{Client: h.c, Cluster: cluster, Recorder: h.rec, Clock: h.clk, Metrics: metrics}, Options{Window: window, SchedulerNames: []string{corev1.DefaultSchedulerName}})
	h.np = test.NodePool()
	h.g.Expect(h.c.Create(h.ctx, h.np)).To(gomega.Succeed())
	return h
}

// reset deletes every Pod, NodeClaim and NodePool and waits until they
// are gone.
func (h *harness) reset() {
	ctx, g := h.ctx, gomega.NewWithT(h.t)
	for _, l := range []client.ObjectList{&corev1.PodList{}, &v1.NodeClaimList{}, &v1.NodePoolList{}} {
		g.Expect(h.c.List(ctx, l)).To(gomega.Succeed())
		g.Expect(meta.EachListItem(l, func(o runtime.Object) error {
			obj := o.(client.Object)
			if len(obj.GetFinalizers()) > 0 {
				patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
				obj.SetFinalizers(nil)
				if err := client.IgnoreNotFound(h.c.Patch(ctx, obj, patch)); err != nil {
					return err
				}
			}
			return client.IgnoreNotFound(h.c.Delete(ctx, obj, client.GracePeriodSeconds(0)))
		})).To(gomega.Succeed())
	}
	g.Eventually(func(g gomega.Gomega) {
		for _, l := range []client.ObjectList{&corev1.PodList{}, &v1.NodeClaimList{}, &v1.NodePoolList{}} {
			g.Expect(h.c.List(ctx, l)).To(gomega.Succeed())
			g.Expect(meta.LenList(l)).To(gomega.BeZero(), "%T left over", l)
		}
	}).WithTimeout(test.EventuallyTimeout).WithPolling(test.PollInterval).Should(gomega.Succeed())
}

// pending creates a pod requesting cpu that kube-scheduler marked
// unschedulable, and triggers the provisioner as its watch would.
func (h *harness) pending(cpu string) *corev1.Pod {
	h.t.Helper()
	p := test.Pod(h.ns, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	})
	h.g.Expect(h.c.Create(h.ctx, p)).To(gomega.Succeed())
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	h.g.Expect(h.c.Status().Update(h.ctx, p)).To(gomega.Succeed())
	h.p.Trigger(false)
	return p
}

// reconcile runs the provisioner once; it must succeed.
func (h *harness) reconcile() time.Duration {
	h.t.Helper()
	res, err := h.p.Reconcile(h.ctx, singleton())
	h.g.Expect(err).NotTo(gomega.HaveOccurred())
	return res.RequeueAfter
}

func (h *harness) claims() []v1.NodeClaim {
	h.t.Helper()
	list := &v1.NodeClaimList{}
	h.g.Expect(h.c.List(h.ctx, list)).To(gomega.Succeed())
	return list.Items
}

// events drains the events recorded so far ("Type Reason message").
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

// A pending pod gets a NodeClaim of its NodePool once the batch window
// closes, with the requirements the solve chose, and is told so.
func TestPendingPodGetsNodeClaim(t *testing.T) {
	h := newHarness(t)
	h.pending("1")
	h.g.Expect(h.reconcile()).To(gomega.Equal(time.Second), "waits for the idle window")
	h.g.Expect(h.claims()).To(gomega.BeEmpty())

	h.clk.Step(time.Second)
	h.g.Expect(h.reconcile()).To(gomega.Equal(10*time.Second), "the pod waits for its NodeClaim: re-checked a max window later")
	claims := h.claims()
	h.g.Expect(claims).To(gomega.HaveLen(1))
	nc := claims[0]
	h.g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.NodePoolLabelKey, h.np.Name))
	h.g.Expect(nc.Spec.Requirements).To(gomega.ContainElements(
		v1.NodeSelectorRequirementWithMinValues{Key: v1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{h.np.Name}},
		v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.xlarge"}},
	))
	h.g.Expect(nc.Spec.Resources.Requests.Cpu().Cmp(resource.MustParse("1"))).To(gomega.BeNumerically(">=", 0))
	h.g.Expect(h.events()).To(gomega.ContainElement("Normal Nominated pod should schedule on nodeclaim " + nc.Name))
}

// Pods arriving while the batch is open are solved together: events
// within the idle window extend it, and one NodeClaim takes both.
func TestPendingPodsAreBatched(t *testing.T) {
	h := newHarness(t)
	h.pending("1")
	h.clk.Step(500 * time.Millisecond)
	h.pending("1")
	h.clk.Step(700 * time.Millisecond)
	h.g.Expect(h.reconcile()).To(gomega.Equal(300*time.Millisecond), "the second pod extended the idle window")
	h.g.Expect(h.claims()).To(gomega.BeEmpty())

	h.clk.Step(300 * time.Millisecond)
	h.reconcile()
	claims := h.claims()
	h.g.Expect(claims).To(gomega.HaveLen(1), "one solve, one NodeClaim for both pods")
	nominated := slices.DeleteFunc(h.events(), func(e string) bool { return e != "Normal Nominated pod should schedule on nodeclaim "+claims[0].Name })
	h.g.Expect(nominated).To(gomega.HaveLen(2))
}

// A pod no instance type can hold gets no NodeClaim but a warning event
// saying why, and is solved again a maximum window later even if nothing
// changes.
func TestUnplaceablePodIsTold(t *testing.T) {
	h := newHarness(t)
	h.pending("100")
	h.clk.Step(time.Second)
	h.g.Expect(h.reconcile()).To(gomega.Equal(window.Max), "re-checked after the maximum window")
	h.g.Expect(h.claims()).To(gomega.BeEmpty())
	warnings := slices.DeleteFunc(h.events(), func(e string) bool { return !strings.HasPrefix(e, "Warning ") })
	h.g.Expect(warnings).To(gomega.HaveLen(1))

	h.clk.Step(window.Max)
	h.g.Expect(h.reconcile()).To(gomega.Equal(window.Max), "still waiting")
	h.g.Expect(h.events()).To(gomega.HaveLen(1), "solved again")
}

// A solve right after a create, before the cache shows the NodeClaim,
// counts it as in-flight capacity: an immediate re-plan (a launch failed
// elsewhere) must not plan the same pods a second time.
func TestCreatedNodeClaimCountsUntilTheCacheShowsIt(t *testing.T) {
	h := newHarness(t)
	h.pending("1")
	h.clk.Step(time.Second)
	h.reconcile()
	claims := h.claims()
	h.g.Expect(claims).To(gomega.HaveLen(1))
	// The cache not showing it yet is the NodeClaim gone from the server.
	nc := &claims[0]
	nc.Finalizers = nil
	h.g.Expect(h.c.Update(h.ctx, nc)).To(gomega.Succeed())
	h.g.Expect(h.c.Delete(h.ctx, nc)).To(gomega.Succeed())
	h.g.Eventually(h.claims).Should(gomega.BeEmpty())

	h.clk.Step(time.Second)
	h.p.Trigger(true)
	h.reconcile()
	h.g.Expect(h.claims()).To(gomega.BeEmpty(), "the pod is planned onto the NodeClaim just created")
}
