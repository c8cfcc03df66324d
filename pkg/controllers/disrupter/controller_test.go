package disrupter

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/disruption"
)

// value reads a counter's or gauge's value (not prometheus/testutil,
// which would add a module to go.mod).
func value(h *harness, m prometheus.Metric) float64 {
	out := &dto.Metric{}
	h.g.Expect(m.Write(out)).To(gomega.Succeed())
	if c := out.GetCounter(); c != nil {
		return c.GetValue()
	}
	return out.GetGauge().GetValue()
}

// An empty node is decided on the first evaluation, left alone until the
// validation delay passes, then tainted and its NodeClaim deleted (the
// termination finalizer keeps it), recording why.
func TestEmptinessEndToEnd(t *testing.T) {
	h := newHarness(t, false)
	g := h.g
	np := h.nodePool()
	nc, node := h.node(np, "4")

	res := h.reconcile()
	g.Expect(res.RequeueAfter).To(gomega.Equal(validationDelay), "wakes when the decision is due for validation")
	o, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeTrue())
	g.Expect(o.Phase).To(gomega.Equal(disruption.PhaseValidating))
	g.Expect(o.Command.Names()).To(gomega.Equal([]string{nc.Name}))
	g.Expect(h.tainted(node)).To(gomega.BeFalse(), "tainted before validation")
	g.Expect(h.getNodeClaim(nc).DeletionTimestamp).To(gomega.BeNil())

	h.clk.Step(5 * time.Second)
	g.Expect(h.reconcile().RequeueAfter).To(gomega.Equal(10*time.Second), "still waiting for the delay")
	g.Expect(h.tainted(node)).To(gomega.BeFalse())

	h.clk.Step(10 * time.Second)
	res = h.reconcile()
	g.Expect(res.RequeueAfter).To(gomega.Equal(pollInterval))
	_, ok = h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeFalse(), "the command finished")
	g.Expect(h.tainted(node)).To(gomega.BeTrue())
	got := h.getNodeClaim(nc)
	g.Expect(got.DeletionTimestamp).NotTo(gomega.BeNil())
	g.Expect(got.Finalizers).To(gomega.ContainElement(v1.TerminationFinalizer))
	reason := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeDisruptionReason)
	g.Expect(reason).NotTo(gomega.BeNil())
	g.Expect(reason.Status).To(gomega.Equal(metav1.ConditionTrue))
	g.Expect(reason.Reason).To(gomega.Equal(string(v1.DisruptionReasonEmpty)))
	g.Expect(reason.Message).To(gomega.Equal("Emptiness"))
	g.Expect(eventsAbout(h.events(), "DisruptionTerminating")).To(gomega.HaveLen(2), "on the NodeClaim and the Node")
	g.Expect(value(h, h.metrics.decisions.WithLabelValues("Emptiness", "Empty"))).To(gomega.Equal(1.0))

	// The next evaluation leaves the deleting node, and its taint, alone.
	h.clk.Step(pollInterval)
	h.reconcile()
	_, ok = h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeFalse())
	g.Expect(h.tainted(node)).To(gomega.BeTrue(), "a deleting node's taint is not stale")
}

// A pod arriving on a decided empty node before the validation delay
// passes cancels the command: the node is neither tainted nor deleted.
func TestValidationAbandons(t *testing.T) {
	h := newHarness(t, false)
	g := h.g
	np := h.nodePool()
	nc, node := h.node(np, "4")

	h.reconcile()
	_, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeTrue(), "decided")
	h.pod(node, "1")

	h.clk.Step(validationDelay)
	h.reconcile()
	_, ok = h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeFalse(), "abandoned")
	g.Expect(h.tainted(node)).To(gomega.BeFalse())
	got := h.getNodeClaim(nc)
	g.Expect(got.DeletionTimestamp).To(gomega.BeNil())
	g.Expect(meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeDisruptionReason)).To(gomega.BeNil())
	blocked := eventsAbout(h.events(), disruption.EventDisruptionBlocked)
	g.Expect(blocked).To(gomega.ConsistOf(gomega.And(
		gomega.ContainSubstring("Emptiness abandoned"), gomega.ContainSubstring(nc.Name), gomega.ContainSubstring("no longer qualifies"),
	)))
	g.Expect(value(h, h.metrics.decisions.WithLabelValues("Emptiness", "Empty"))).To(gomega.BeZero())
}

// driftWithReplacement sets up a drifted busy node "a" whose pod fits on
// neither of the other (full) nodes, evaluates, validates, and returns
// a's NodeClaim and Node and the replacement NodeClaim's name.
func driftWithReplacement(h *harness) (*v1.NodeClaim, *corev1.Node, string) {
	g := h.g
	np := h.nodePool(func(np *v1.NodePool) { np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("Never") })
	nc, node := h.node(np, "4", h.drifted)
	h.pod(node, "3")
	for range 2 {
		_, other := h.node(np, "4")
		h.pod(other, "3")
	}

	h.reconcile()
	o, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeTrue(), "decided")
	g.Expect(o.Command.Method).To(gomega.Equal("Drift"))
	g.Expect(o.Command.Names()).To(gomega.Equal([]string{nc.Name}))
	g.Expect(o.Command.Replacements).To(gomega.HaveLen(1))
	g.Expect(h.tainted(node)).To(gomega.BeFalse())

	h.clk.Step(validationDelay)
	res := h.reconcile()
	g.Expect(res.RequeueAfter).To(gomega.Equal(replacingPoll))
	o, ok = h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeTrue())
	g.Expect(o.Phase).To(gomega.Equal(disruption.PhaseReplacing))
	g.Expect(o.Replacements).To(gomega.HaveLen(1))
	g.Expect(h.tainted(node)).To(gomega.BeTrue())
	got := h.getNodeClaim(nc)
	g.Expect(got.DeletionTimestamp).To(gomega.BeNil(), "deleted before its replacement is up")
	reason := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeDisruptionReason)
	g.Expect(reason).NotTo(gomega.BeNil())
	g.Expect(reason.Reason).To(gomega.Equal(string(v1.DisruptionReasonDrifted)))

	replacement := &v1.NodeClaim{}
	g.Expect(h.c.Get(h.ctx, client.ObjectKey{Name: o.Replacements[0]}, replacement)).To(gomega.Succeed())
	g.Expect(replacement.Labels).To(gomega.HaveKeyWithValue(v1.NodePoolLabelKey, np.Name))
	g.Expect(eventsAbout(h.events(), "DisruptionLaunching")).NotTo(gomega.BeEmpty())
	return nc, node, replacement.Name
}

// A replacement that fails (its NodeClaim deleted before it initialized)
// abandons the command: the taint and the DisruptionReason come off, the
// candidate stays.
func TestReplacementFailureUntaints(t *testing.T) {
	h := newHarness(t, true)
	g := h.g
	nc, node, name := driftWithReplacement(h)

	replacement := &v1.NodeClaim{}
	g.Expect(h.c.Get(h.ctx, client.ObjectKey{Name: name}, replacement)).To(gomega.Succeed())
	h.release(replacement)
	g.Eventually(func() bool {
		return errors.IsNotFound(h.c.Get(h.ctx, client.ObjectKey{Name: name}, &v1.NodeClaim{}))
	}).Should(gomega.BeTrue())

	h.clk.Step(time.Second)
	h.reconcile()
	_, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeFalse(), "abandoned")
	g.Expect(h.tainted(node)).To(gomega.BeFalse())
	got := h.getNodeClaim(nc)
	g.Expect(got.DeletionTimestamp).To(gomega.BeNil())
	g.Expect(meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeDisruptionReason)).To(gomega.BeNil())
	g.Expect(eventsAbout(h.events(), "Drift abandoned: replacement nodeclaim "+name+" failed")).To(gomega.HaveLen(1))
	g.Expect(value(h, h.metrics.decisions.WithLabelValues("Drift", "Drifted"))).To(gomega.BeZero())
}

// Once every replacement has initialized, the candidate is deleted.
func TestReplacementInitializedDeletes(t *testing.T) {
	h := newHarness(t, true)
	g := h.g
	nc, node, name := driftWithReplacement(h)

	// Still launching: nothing moves.
	h.clk.Step(time.Second)
	g.Expect(h.reconcile().RequeueAfter).To(gomega.Equal(replacingPoll))
	g.Expect(h.getNodeClaim(nc).DeletionTimestamp).To(gomega.BeNil())

	replacement := &v1.NodeClaim{}
	g.Expect(h.c.Get(h.ctx, client.ObjectKey{Name: name}, replacement)).To(gomega.Succeed())
	replacement.Status.ProviderID = "fake://zone-a/" + name
	replacement.Status.Conditions = []metav1.Condition{
		condition(v1.ConditionTypeLaunched, "Launched", h.clk.Now()),
		condition(v1.ConditionTypeRegistered, "Registered", h.clk.Now()),
		condition(v1.ConditionTypeInitialized, "Initialized", h.clk.Now()),
	}
	g.Expect(h.c.Status().Update(h.ctx, replacement)).To(gomega.Succeed())

	h.clk.Step(time.Second)
	g.Expect(h.reconcile().RequeueAfter).To(gomega.Equal(pollInterval))
	_, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeFalse(), "finished")
	got := h.getNodeClaim(nc)
	g.Expect(got.DeletionTimestamp).NotTo(gomega.BeNil())
	g.Expect(h.tainted(node)).To(gomega.BeTrue())
	g.Expect(meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeDisruptionReason)).NotTo(gomega.BeNil())
	g.Expect(h.getNodeClaim(replacement).DeletionTimestamp).To(gomega.BeNil())
	g.Expect(eventsAbout(h.events(), "DisruptionTerminating")).To(gomega.HaveLen(2))
	g.Expect(value(h, h.metrics.decisions.WithLabelValues("Drift", "Drifted"))).To(gomega.Equal(1.0))
}

// A budget of 0 holds an empty node; the verdict is reported on its
// NodeClaim and Node, at most once per five minutes.
func TestBudgetZeroReportsVerdict(t *testing.T) {
	h := newHarness(t, false)
	g := h.g
	np := h.nodePool(func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}} })
	nc, node := h.node(np, "4")
	const msg = "disruption budget of 0 for Empty"

	g.Expect(h.reconcile().RequeueAfter).To(gomega.Equal(pollInterval))
	_, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeFalse(), "nothing decided")
	g.Expect(eventsAbout(h.events(), msg)).To(gomega.ConsistOf(
		"Normal "+disruption.EventUnconsolidatable+" "+msg,
		"Normal "+disruption.EventUnconsolidatable+" "+msg,
	), "on the NodeClaim and the Node")
	g.Expect(value(h, h.metrics.allowed.WithLabelValues(np.Name, "Empty"))).To(gomega.BeZero())
	g.Expect(value(h, h.metrics.eligible.WithLabelValues("Emptiness"))).To(gomega.Equal(1.0))

	h.clk.Step(4 * time.Minute)
	h.reconcile()
	g.Expect(eventsAbout(h.events(), msg)).To(gomega.BeEmpty(), "reported again within 5m")

	h.clk.Step(time.Minute)
	h.reconcile()
	g.Expect(eventsAbout(h.events(), msg)).To(gomega.HaveLen(2), "reported again after 5m")

	g.Expect(h.tainted(node)).To(gomega.BeFalse())
	g.Expect(h.getNodeClaim(nc).DeletionTimestamp).To(gomega.BeNil())
}

// A disrupted taint no command accounts for (one lost to a restart) is
// removed; other taints stay.
func TestStaleTaintRemoved(t *testing.T) {
	h := newHarness(t, false)
	g := h.g
	np := h.nodePool(func(np *v1.NodePool) { np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("Never") })
	other := corev1.Taint{Key: "example.com/dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}
	nc, node := h.node(np, "4", func(nc *v1.NodeClaim, n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{other, v1.DisruptedNoScheduleTaint()}
		meta.SetStatusCondition(&nc.Status.Conditions, condition(v1.ConditionTypeDisruptionReason, string(v1.DisruptionReasonDrifted), h.clk.Now()))
	})
	g.Expect(h.tainted(node)).To(gomega.BeTrue())

	h.reconcile()
	_, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeFalse())
	g.Expect(h.tainted(node)).To(gomega.BeFalse())
	g.Expect(h.getNode(node).Spec.Taints).To(gomega.Equal([]corev1.Taint{other}))
	got := h.getNodeClaim(nc)
	g.Expect(got.DeletionTimestamp).To(gomega.BeNil())
	g.Expect(meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeDisruptionReason)).To(gomega.BeNil(), "the reason goes with the taint")
}

// A drifted busy node whose pods fit on the other nodes' free capacity
// needs no replacement: it is tainted and deleted once validated.
func TestDriftWithoutReplacement(t *testing.T) {
	h := newHarness(t, true)
	g := h.g
	np := h.nodePool(func(np *v1.NodePool) { np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("Never") })
	nc, node := h.node(np, "4", h.drifted)
	h.pod(node, "3")
	_, other := h.node(np, "4")
	h.pod(other, "1")

	h.reconcile()
	o, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeTrue(), "decided")
	g.Expect(o.Command.Replacements).To(gomega.BeEmpty())

	h.clk.Step(validationDelay)
	g.Expect(h.reconcile().RequeueAfter).To(gomega.Equal(pollInterval))
	g.Expect(h.tainted(node)).To(gomega.BeTrue())
	g.Expect(h.getNodeClaim(nc).DeletionTimestamp).NotTo(gomega.BeNil())
	ncs := &v1.NodeClaimList{}
	g.Expect(h.c.List(h.ctx, ncs)).To(gomega.Succeed())
	g.Expect(ncs.Items).To(gomega.HaveLen(2), "no replacement launched")
}
