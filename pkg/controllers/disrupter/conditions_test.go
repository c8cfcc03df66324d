package disrupter

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/test"
)

// conditions reconciles nc with a Conditions controller (drift: the
// gate) and returns the result and nc as stored.
func (h *harness) conditions(nc *v1.NodeClaim, drift bool) (reconcile.Result, *v1.NodeClaim) {
	h.t.Helper()
	res, err := NewConditions(ConditionsDeps{Client: h.c, Cloud: h.cloud, Applier: h.newApplier(nil), Clock: h.clk}, ConditionsOptions{Drift: drift}).Reconcile(h.ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(nc)})
	h.g.Expect(err).NotTo(gomega.HaveOccurred())
	return res, h.getNodeClaim(nc)
}

// stamp gives nc its NodePool's current hash, as the provisioner does.
func stamp(np *v1.NodePool) func(*v1.NodeClaim, *corev1.Node) {
	return func(nc *v1.NodeClaim, _ *corev1.Node) {
		nc.Annotations = map[string]string{v1.NodePoolHashAnnotationKey: np.Hash(), v1.NodePoolHashVersionAnnotationKey: v1.NodePoolHashVersion}
	}
}

func drift(nc *v1.NodeClaim) *metav1.Condition {
	return meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDrifted)
}

// A NodeClaim whose labels no longer satisfy its NodePool's requirements
// is Drifted (RequirementsDrifted); with the Drift gate off it is not.
func TestConditionsRequirementsDrifted(t *testing.T) {
	h := newHarness(t, true)
	g := h.g
	np := h.nodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}},
		}
	})
	nc, _ := h.node(np, "4", stamp(np)) // an m5.xlarge

	_, got := h.conditions(nc, true)
	cond := drift(got)
	g.Expect(cond).NotTo(gomega.BeNil())
	g.Expect(cond.Status).To(gomega.Equal(metav1.ConditionTrue))
	g.Expect(cond.Reason).To(gomega.Equal(disruption.DriftRequirements))

	_, got = h.conditions(nc, false)
	g.Expect(drift(got)).To(gomega.BeNil(), "the Drift gate is off")
	g.Expect(h.cloud.IsDriftedCalls).To(gomega.HaveLen(1), "the cloud is not asked with the gate off")
}

// Widening the requirements so the node still matches is not drift;
// changing the template (the hash) is: NodePoolDrifted. The cloud's own
// reason counts when the NodePool has none.
func TestConditionsNodePoolDrifted(t *testing.T) {
	h := newHarness(t, true)
	g := h.g
	np := h.nodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.xlarge"}},
		}
	})
	nc, _ := h.node(np, "4", stamp(np))

	_, got := h.conditions(nc, true)
	g.Expect(drift(got)).To(gomega.BeNil())

	h.cloud.Drifted = "ImageDrifted"
	_, got = h.conditions(nc, true)
	g.Expect(drift(got)).NotTo(gomega.BeNil())
	g.Expect(drift(got).Reason).To(gomega.Equal("ImageDrifted"))
	h.cloud.Drifted = ""
	_, got = h.conditions(nc, true)
	g.Expect(drift(got)).To(gomega.BeNil(), "the cloud no longer reports drift")

	g.Expect(h.c.Get(h.ctx, client.ObjectKeyFromObject(np), np)).To(gomega.Succeed())
	np.Spec.Template.Spec.Requirements[0].Values = []string{"m5.large", "m5.xlarge"}
	np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1"}}
	g.Expect(h.c.Update(h.ctx, np)).To(gomega.Succeed())
	_, got = h.conditions(nc, true)
	g.Expect(drift(got)).To(gomega.BeNil(), "widening requirements and behavioural fields are not drift")

	g.Expect(h.c.Get(h.ctx, client.ObjectKeyFromObject(np), np)).To(gomega.Succeed())
	np.Spec.Template.ObjectMeta.Labels = map[string]string{"team": "payments"}
	g.Expect(h.c.Update(h.ctx, np)).To(gomega.Succeed())
	_, got = h.conditions(nc, true)
	cond := drift(got)
	g.Expect(cond).NotTo(gomega.BeNil())
	g.Expect(cond.Status).To(gomega.Equal(metav1.ConditionTrue))
	g.Expect(cond.Reason).To(gomega.Equal(disruption.DriftNodePool))

	_, got = h.conditions(nc, false)
	g.Expect(drift(got)).To(gomega.BeNil(), "the Drift gate is off")
}

// Consolidatable turns True only once consolidateAfter has passed since
// the last pod event, and RequeueAfter points at that moment.
func TestConditionsConsolidatable(t *testing.T) {
	h := newHarness(t, true)
	g := h.g
	np := h.nodePool(func(np *v1.NodePool) { np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("2m") })
	nc, _ := h.node(np, "4", func(nc *v1.NodeClaim, _ *corev1.Node) { nc.Status.LastPodEventTime = metav1.NewTime(h.clk.Now()) })
	consolidatable := func(nc *v1.NodeClaim) bool {
		return meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeConsolidatable)
	}

	res, got := h.conditions(nc, true)
	g.Expect(consolidatable(got)).To(gomega.BeFalse())
	g.Expect(res.RequeueAfter).To(gomega.Equal(2 * time.Minute))

	h.clk.Step(90 * time.Second)
	res, got = h.conditions(nc, true)
	g.Expect(consolidatable(got)).To(gomega.BeFalse())
	g.Expect(res.RequeueAfter).To(gomega.Equal(30 * time.Second))

	h.clk.Step(30 * time.Second)
	res, got = h.conditions(nc, true)
	g.Expect(consolidatable(got)).To(gomega.BeTrue())
	g.Expect(res.RequeueAfter).To(gomega.Equal(disruption.CloudDriftPoll), "nothing flips by itself any more")

	// A pod event restarts the wait and takes the condition away.
	got.Status.LastPodEventTime = metav1.NewTime(h.clk.Now())
	g.Expect(h.c.Status().Update(h.ctx, got)).To(gomega.Succeed())
	res, got = h.conditions(nc, true)
	g.Expect(consolidatable(got)).To(gomega.BeFalse())
	g.Expect(res.RequeueAfter).To(gomega.Equal(2 * time.Minute))
}

// consolidateAfter: Never never makes a NodeClaim consolidatable; a
// NodeClaim not launched yet is not judged at all.
func TestConditionsNeverAndUnlaunched(t *testing.T) {
	h := newHarness(t, true)
	g := h.g
	np := h.nodePool(func(np *v1.NodePool) {
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("Never")
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}},
		}
	})
	nc, _ := h.node(np, "4")
	h.clk.Step(time.Hour)
	res, got := h.conditions(nc, true)
	g.Expect(meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeConsolidatable)).To(gomega.BeNil())
	g.Expect(res.RequeueAfter).To(gomega.Equal(disruption.CloudDriftPoll))
	g.Expect(drift(got)).NotTo(gomega.BeNil(), "the m5.xlarge drifted")

	unlaunched, _ := h.node(np, "4", func(nc *v1.NodeClaim, _ *corev1.Node) {
		meta.RemoveStatusCondition(&nc.Status.Conditions, v1.ConditionTypeLaunched)
	})
	_, got = h.conditions(unlaunched, true)
	g.Expect(drift(got)).To(gomega.BeNil(), "not launched: not judged")
}

// When the cloud reports a reserved node's instance outside its
// reservation (it ended), the NodeClaim and Node are relabelled
// on-demand (never the reverse) and, on a NodePool that allows only
// reserved capacity, the node is drifted; reserved nodes are polled
// every ReservationPoll.
func TestConditionsReservationEnded(t *testing.T) {
	h := newHarness(t, true)
	g := h.g
	reservedOnly := h.nodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeReserved}},
		}
	})
	reserved := func(nc *v1.NodeClaim, n *corev1.Node) {
		for _, labels := range []map[string]string{nc.Labels, n.Labels} {
			labels[v1.CapacityTypeLabelKey] = v1.CapacityTypeReserved
			labels[v1.LabelCapacityReservationID] = "cr-1"
		}
	}
	nc, node := h.node(reservedOnly, "4", stamp(reservedOnly), reserved)
	instance := h.getNodeClaim(nc).DeepCopy()
	h.cloud.Created = map[string]*v1.NodeClaim{nc.Status.ProviderID: instance}

	res, got := h.conditions(nc, true)
	g.Expect(res.RequeueAfter).To(gomega.Equal(disruption.ReservationPoll))
	g.Expect(got.Labels[v1.CapacityTypeLabelKey]).To(gomega.Equal(v1.CapacityTypeReserved), "still in its reservation")
	g.Expect(drift(got)).To(gomega.BeNil())

	instance.Labels[v1.CapacityTypeLabelKey] = v1.CapacityTypeOnDemand
	delete(instance.Labels, v1.LabelCapacityReservationID)
	res, got = h.conditions(nc, true)
	g.Expect(got.Labels[v1.CapacityTypeLabelKey]).To(gomega.Equal(v1.CapacityTypeOnDemand))
	g.Expect(got.Labels).NotTo(gomega.HaveKey(v1.LabelCapacityReservationID))
	n := h.getNode(node)
	g.Expect(n.Labels[v1.CapacityTypeLabelKey]).To(gomega.Equal(v1.CapacityTypeOnDemand))
	g.Expect(n.Labels).NotTo(gomega.HaveKey(v1.LabelCapacityReservationID))
	g.Expect(eventsAbout(h.events(), "CapacityReservationEnded")).To(gomega.HaveLen(2))
	cond := drift(got)
	g.Expect(cond).NotTo(gomega.BeNil(), "the NodePool allows only reserved capacity")
	g.Expect(cond.Reason).To(gomega.Equal(disruption.DriftRequirements))
	g.Expect(res.RequeueAfter).To(gomega.Equal(disruption.CloudDriftPoll), "on-demand now: no reservation to poll")

	// Never the reverse: an on-demand node the cloud reports reserved
	// keeps its labels.
	onDemand, _ := h.node(reservedOnly, "4")
	joined := h.getNodeClaim(onDemand).DeepCopy()
	joined.Labels[v1.CapacityTypeLabelKey] = v1.CapacityTypeReserved
	h.cloud.Created[onDemand.Status.ProviderID] = joined
	_, got = h.conditions(onDemand, true)
	g.Expect(got.Labels).NotTo(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved))
}

// A NodeClass's change reaches the NodeClaims that name it, and only
// those: its status (a new image, a subnet gone) may drift them.
func TestConditionsNodeClassMapsToItsNodeClaims(t *testing.T) {
	h := newHarness(t, true)
	ctx := context.Background()
	class := test.SimNodeClass()
	named := test.NodeClaim(func(nc *v1.NodeClaim) { nc.Spec.NodeClassRef.Name = class.Name })
	other := test.NodeClaim()
	for _, nc := range []*v1.NodeClaim{named, other} {
		h.g.Expect(h.c.Create(ctx, nc)).To(gomega.Succeed())
		t.Cleanup(func() { _ = h.c.Delete(ctx, nc) })
	}
	c := NewConditions(ConditionsDeps{Client: h.c, Cloud: h.cloud, Applier: h.newApplier(nil), Clock: h.clk}, ConditionsOptions{Drift: true})
	gk := schema.GroupKind{Group: simv1alpha1.Group, Kind: "SimNodeClass"}
	h.g.Eventually(func(g gomega.Gomega) {
		g.Expect(c.claimsOfNodeClass(gk)(ctx, class)).To(gomega.Equal([]reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(named)}}))
	}).Should(gomega.Succeed())
	h.g.Expect(c.claimsOfNodeClass(schema.GroupKind{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass"})(ctx, class)).To(gomega.BeEmpty(), "another kind of the same name")
}
