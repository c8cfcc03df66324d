package disrupter

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/drain"
)

// Expiration deletes a NodeClaim once it has lived for its expireAfter,
// do-not-disrupt and a budget of 0 notwithstanding, and waits until
// then otherwise.
func TestExpiration(t *testing.T) {
	h := newHarness(t, true)
	g := h.g
	np := h.nodePool(func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}} })
	nc, node := h.node(np, "4", func(nc *v1.NodeClaim, n *corev1.Node) {
		nc.Spec.ExpireAfter = v1.MustParseNillableDuration("1h")
		n.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
	})
	stored := h.getNodeClaim(nc)
	expires := stored.CreationTimestamp.Add(time.Hour)
	h.clk.SetTime(expires.Add(-10 * time.Minute))
	e := NewExpiration(ExpirationDeps{Client: h.c, Applier: h.newApplier(nil), Clock: h.clk})
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: nc.Name}}

	res, err := e.Reconcile(h.ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.RequeueAfter).To(gomega.Equal(10 * time.Minute))
	g.Expect(h.getNodeClaim(nc).DeletionTimestamp).To(gomega.BeNil())

	h.clk.SetTime(expires)
	_, err = e.Reconcile(h.ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	got := h.getNodeClaim(nc)
	g.Expect(got.DeletionTimestamp).NotTo(gomega.BeNil(), "an expired node goes, whatever budgets and do-not-disrupt say")
	reason := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeDisruptionReason)
	g.Expect(reason).NotTo(gomega.BeNil())
	g.Expect(reason.Reason).To(gomega.Equal(string(v1.DisruptionReasonExpired)))
	g.Expect(got.Annotations).NotTo(gomega.HaveKey(v1.NodeClaimTerminationTimestampAnnotationKey), "expiry's deadline is the terminationGracePeriod's")
	g.Expect(eventsAbout(h.events(), "DisruptionTerminating")).To(gomega.HaveLen(2), "on the NodeClaim and the Node")
	g.Expect(value(h, h.metrics.disrupted.WithLabelValues("Expired"))).To(gomega.Equal(1.0))
	_ = node

	// Never never expires.
	never, _ := h.node(np, "4", func(nc *v1.NodeClaim, _ *corev1.Node) { nc.Spec.ExpireAfter = v1.MustParseNillableDuration(v1.Never) })
	h.clk.Step(1000 * time.Hour)
	res, err = e.Reconcile(h.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: never.Name}})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res).To(gomega.Equal(reconcile.Result{}))
	g.Expect(h.getNodeClaim(never).DeletionTimestamp).To(gomega.BeNil())
}

// A spot interruption deletes the NodeClaim at once with the notice's
// deadline, marks the offering unavailable, counts the notice once and
// reports it on the Node; a rebalance recommendation is an event unless
// the NodePool opts in, and then marks the NodeClaim InterruptionExpected.
func TestInterruption(t *testing.T) {
	h := newHarness(t, true)
	g := h.g
	np := h.nodePool()
	optIn := h.nodePool(func(np *v1.NodePool) {
		np.Annotations = map[string]string{v1.RebalanceAnnotationKey: v1.RebalanceReplace}
	})
	interrupted, node := h.node(np, "4", func(_ *v1.NodeClaim, n *corev1.Node) {
		n.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
	})
	advised, _ := h.node(np, "4")
	replaced, _ := h.node(optIn, "4")
	deadline := h.clk.Now().Add(2 * time.Minute).Truncate(time.Second)
	h.cloud.Notices = []cloudprovider.InterruptionNotice{
		{Kind: cloudprovider.SpotInterruption, ProviderID: interrupted.Status.ProviderID, InstanceType: "m5.xlarge", Zone: "zone-a", Deadline: deadline, Message: "spot capacity reclaimed"},
		{Kind: cloudprovider.RebalanceRecommendation, ProviderID: advised.Status.ProviderID, InstanceType: "m5.xlarge", Zone: "zone-a"},
		{Kind: cloudprovider.RebalanceRecommendation, ProviderID: replaced.Status.ProviderID, InstanceType: "m5.xlarge", Zone: "zone-a"},
	}
	unavailable := cloudprovider.NewUnavailableOfferings(h.clk, 0)
	r := NewInterruption(InterruptionDeps{Client: h.c, Source: h.cloud, Applier: h.newApplier(unavailable), Clock: h.clk}, InterruptionOptions{})
	for range 2 {
		res, err := r.Reconcile(h.ctx, reconcile.Request{})
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(res.RequeueAfter).To(gomega.Equal(DefaultInterruptionPoll))
	}

	got := h.getNodeClaim(interrupted)
	g.Expect(got.DeletionTimestamp).NotTo(gomega.BeNil(), "interruption ignores do-not-disrupt")
	at, ok := drain.TerminationTimestamp(got)
	g.Expect(ok).To(gomega.BeTrue())
	g.Expect(at).To(gomega.BeTemporally("==", deadline))
	g.Expect(meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeDisruptionReason).Reason).To(gomega.Equal(string(v1.DisruptionReasonInterrupted)))
	g.Expect(unavailable.IsUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "m5.xlarge", Zone: "zone-a"})).To(gomega.BeTrue())

	g.Expect(h.getNodeClaim(advised).DeletionTimestamp).To(gomega.BeNil())
	g.Expect(meta.FindStatusCondition(h.getNodeClaim(advised).Status.Conditions, v1.ConditionTypeInterruptionExpected)).To(gomega.BeNil())
	expected := meta.FindStatusCondition(h.getNodeClaim(replaced).Status.Conditions, v1.ConditionTypeInterruptionExpected)
	g.Expect(expected).NotTo(gomega.BeNil(), "the opted-in NodePool's node is to be replaced")
	g.Expect(expected.Reason).To(gomega.Equal(string(cloudprovider.RebalanceRecommendation)))
	g.Expect(h.getNodeClaim(replaced).DeletionTimestamp).To(gomega.BeNil(), "replaced within budgets by the disruption engine, not deleted here")

	evts := h.events()
	g.Expect(eventsAbout(evts, "Warning SpotInterruption")).To(gomega.HaveLen(2), "on the Node and the NodeClaim, once: %v", evts)
	g.Expect(eventsAbout(evts, "Warning RebalanceRecommendation")).To(gomega.HaveLen(4))
	g.Expect(value(h, h.metrics.received.WithLabelValues("SpotInterruption"))).To(gomega.Equal(1.0))
	g.Expect(value(h, h.metrics.received.WithLabelValues("RebalanceRecommendation"))).To(gomega.Equal(2.0))
	g.Expect(value(h, h.metrics.disrupted.WithLabelValues("Interrupted"))).To(gomega.Equal(1.0))
	_ = node
}

// The disruption engine replaces a node marked InterruptionExpected like
// a drifted one (budget reason Drifted), and does so with Drift off.
func TestExpectedInterruptionReplaced(t *testing.T) {
	h := newHarness(t, false)
	g := h.g
	np := h.nodePool(func(np *v1.NodePool) { np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("Never") })
	nc, _ := h.node(np, "4", func(nc *v1.NodeClaim, _ *corev1.Node) {
		meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeInterruptionExpected, Status: metav1.ConditionTrue,
			Reason: string(cloudprovider.PreemptibleMaxLifetime), LastTransitionTime: metav1.NewTime(h.clk.Now())})
	})
	h.reconcile()
	o, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeTrue(), "decided")
	g.Expect(o.Command.Method).To(gomega.Equal("ExpectedInterruption"))
	g.Expect(o.Command.Reason).To(gomega.Equal(v1.DisruptionReasonDrifted))
	g.Expect(o.Command.Names()).To(gomega.Equal([]string{nc.Name}))
}
