package disrupter

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// fellBackNode is a harness with one on-demand node, a 3-core pod on it,
// whose NodeClaim allowed spot: it fell back, and its NodePool (spot or
// on-demand, consolidation off) lets it return.
func fellBackNode(t *testing.T) (*harness, *v1.NodeClaim) {
	h := newHarness(t, true)
	np := h.nodePool(func(np *v1.NodePool) {
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never)
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}},
		}
	})
	nc, node := h.node(np, "4", func(nc *v1.NodeClaim, n *corev1.Node) {
		for _, labels := range []map[string]string{nc.Labels, n.Labels} {
			labels[v1.CapacityTypeLabelKey] = v1.CapacityTypeOnDemand
			labels[v1.LabelZone] = "zone-a"
		}
		nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}},
		}
	})
	h.pod(node, "3")
	return h, nc
}

// The retry schedule of a return to spot, on a fake clock: an on-demand
// node that fell back from spot waits until spot has been available for
// return-to-preferred-after (10m), then is replaced by a spot-only
// replacement; when that fails, the node is annotated to wait twice as
// long, and tries again only then.
func TestReturnToPreferredRetrySchedule(t *testing.T) {
	h, nc := fellBackNode(t)
	g := h.g
	unavailable := cloudprovider.NewUnavailableOfferings(h.clk, 3*time.Minute)
	for _, zone := range []string{"zone-a", "zone-b"} {
		unavailable.MarkUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "m5.xlarge", Zone: zone}, "InsufficientInstanceCapacity")
	}
	settledAt := h.clk.Now().Add(3*time.Minute + disruption.DefaultReturnAfter)
	h.ctrl = New(Deps{Reader: h.c, Cluster: h.ctrl.cluster, Applier: h.newApplier(nil), Clock: h.clk, Metrics: h.metrics}, Options{
		PollInterval: pollInterval, ValidationDelay: validationDelay, ReplacementTimeout: replacementTimeout, Unavailable: unavailable,
	})

	// The controller leads from now: it knows spot's marks since.
	h.reconcile()
	// Spot came back 3 minutes in; 10 more are needed.
	h.clk.Step(5 * time.Minute)
	h.reconcile()
	_, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeFalse(), "spot not available long enough")
	g.Expect(eventsAbout(h.events(), "spot is available again, but not for 10m0s yet")).NotTo(gomega.BeEmpty())

	h.clk.SetTime(settledAt)
	h.reconcile()
	o, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeTrue(), "returns once spot has been available for 10m")
	g.Expect(o.Command.Method).To(gomega.Equal("ReturnToPreferred"))
	g.Expect(o.Command.Reason).To(gomega.Equal(v1.DisruptionReasonUnderutilized))
	h.clk.Step(validationDelay)
	h.reconcile()
	o, _ = h.ctrl.engine.Active()
	g.Expect(o.Replacements).To(gomega.HaveLen(1))
	replacement := &v1.NodeClaim{}
	g.Expect(h.c.Get(h.ctx, client.ObjectKey{Name: o.Replacements[0]}, replacement)).To(gomega.Succeed())
	ct := scheduling.NewNodeSelectorRequirementsWithMinValues(replacement.Spec.Requirements...).Get(v1.CapacityTypeLabelKey)
	g.Expect(ct.Values()).To(gomega.Equal([]string{v1.CapacityTypeSpot}), "the replacement may launch as spot only")

	// The launch fails for want of spot: the replacement goes, the return
	// is abandoned and backs off for after × 2.
	h.release(replacement)
	g.Eventually(func() bool {
		return errors.IsNotFound(h.c.Get(h.ctx, client.ObjectKey{Name: replacement.Name}, &v1.NodeClaim{}))
	}).Should(gomega.BeTrue())
	h.clk.Step(time.Second)
	failedAt := h.clk.Now()
	h.reconcile()
	_, ok = h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeFalse(), "abandoned")
	got := h.getNodeClaim(nc)
	g.Expect(got.DeletionTimestamp).To(gomega.BeNil())
	g.Expect(got.Annotations).To(gomega.HaveKeyWithValue(v1.ReturnAttemptsAnnotationKey, "1"))
	notBefore := failedAt.Add(2 * disruption.DefaultReturnAfter)
	g.Expect(got.Annotations).To(gomega.HaveKeyWithValue(v1.ReturnNotBeforeAnnotationKey, notBefore.UTC().Format(time.RFC3339)))

	h.clk.SetTime(notBefore.Add(-time.Minute))
	res := h.reconcile()
	_, ok = h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeFalse(), "still backing off")
	g.Expect(res.RequeueAfter).To(gomega.BeNumerically("<=", time.Minute), "woken when the backoff ends")
	g.Expect(eventsAbout(h.events(), "after 1 failed attempt(s)")).NotTo(gomega.BeEmpty())

	h.clk.SetTime(notBefore)
	h.reconcile()
	_, ok = h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeTrue(), "tries again once the backoff ends")
}

// A controller that starts leading knows nothing of the offerings marked
// before (its predecessor's cache went with its process): a fallback
// node returns only once spot has been available for the NodePool's
// after since this controller's first reconcile, not at once.
func TestReturnToPreferredWaitsAfterRestart(t *testing.T) {
	h, _ := fellBackNode(t)
	g := h.g
	h.clk.Step(time.Hour)
	leading := h.clk.Now()
	h.ctrl = New(Deps{Reader: h.c, Cluster: h.ctrl.cluster, Applier: h.newApplier(nil), Clock: h.clk, Metrics: h.metrics}, Options{
		PollInterval: pollInterval, ValidationDelay: validationDelay, ReplacementTimeout: replacementTimeout,
		Unavailable: cloudprovider.NewUnavailableOfferings(h.clk, 3*time.Minute),
	})
	h.reconcile()
	_, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeFalse(), "a new leader must not trust spot at once")
	g.Expect(eventsAbout(h.events(), "spot is available again, but not for 10m0s yet: returning at "+leading.Add(disruption.DefaultReturnAfter).UTC().Format(time.RFC3339))).NotTo(gomega.BeEmpty())

	h.clk.SetTime(leading.Add(disruption.DefaultReturnAfter))
	h.reconcile()
	o, ok := h.ctrl.engine.Active()
	g.Expect(ok).To(gomega.BeTrue(), "returns once spot has been available for 10m under this leader")
	g.Expect(o.Command.Method).To(gomega.Equal("ReturnToPreferred"))
}
