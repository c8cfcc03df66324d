package disrupter

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/drain"
)

// blocks is the cloud's capacity blocks as a test sets them.
type blocks []cloudprovider.CapacityBlock

func (b blocks) CapacityBlocks(context.Context) ([]cloudprovider.CapacityBlock, error) { return b, nil }

// A capacity block's node is deleted CapacityBlockDrainLead before the
// cloud reclaims it, with the reclaim as its drain deadline, whatever
// do-not-disrupt and budgets say; the controller waits until then, and
// leaves other reserved nodes alone.
func TestCapacityBlocks(t *testing.T) {
	h := newHarness(t, true)
	g := h.g
	np := h.nodePool(func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}} })
	reserved := func(id string) func(*v1.NodeClaim, *corev1.Node) {
		return func(nc *v1.NodeClaim, n *corev1.Node) {
			nc.Labels[v1.CapacityTypeLabelKey], nc.Labels[v1.LabelCapacityReservationID] = v1.CapacityTypeReserved, id
			n.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}
	}
	inBlock, _ := h.node(np, "4", reserved("cr-block"))
	inDefault, _ := h.node(np, "4", reserved("cr-default"))
	reclaim := h.clk.Now().Add(time.Hour).Truncate(time.Second)
	r := NewCapacityBlocks(CapacityBlocksDeps{Client: h.c, Source: blocks{{ID: "cr-block", Reclaim: reclaim}}, Applier: h.newApplier(nil), Clock: h.clk})

	res, err := r.Reconcile(h.ctx, reconcile.Request{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.RequeueAfter).To(gomega.Equal(disruption.ReservationPoll), "the drain is an hour less the lead away; the poll comes first")
	g.Expect(h.getNodeClaim(inBlock).DeletionTimestamp).To(gomega.BeNil())

	h.clk.SetTime(reclaim.Add(-disruption.CapacityBlockDrainLead - 30*time.Second))
	res, err = r.Reconcile(h.ctx, reconcile.Request{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.RequeueAfter).To(gomega.Equal(30*time.Second), "woken when the drain is due")
	g.Expect(h.getNodeClaim(inBlock).DeletionTimestamp).To(gomega.BeNil())

	h.clk.Step(30 * time.Second)
	_, err = r.Reconcile(h.ctx, reconcile.Request{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	got := h.getNodeClaim(inBlock)
	g.Expect(got.DeletionTimestamp).NotTo(gomega.BeNil(), "deleted before the block is reclaimed, do-not-disrupt and budgets notwithstanding")
	at, ok := drain.TerminationTimestamp(got)
	g.Expect(ok).To(gomega.BeTrue())
	g.Expect(at).To(gomega.BeTemporally("==", reclaim), "drained by the reclaim")
	reason := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeDisruptionReason)
	g.Expect(reason).NotTo(gomega.BeNil())
	g.Expect(reason.Reason).To(gomega.Equal(string(v1.DisruptionReasonInterrupted)))
	g.Expect(reason.Message).To(gomega.ContainSubstring("cr-block"))
	g.Expect(h.getNodeClaim(inDefault).DeletionTimestamp).To(gomega.BeNil(), "a default reservation's node stays")
}
