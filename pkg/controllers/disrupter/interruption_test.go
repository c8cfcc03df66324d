package disrupter

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// ackingSource is an interruption source that keeps its notices until
// acknowledged, as the AWS provider's queue does.
type ackingSource struct {
	notices []cloudprovider.InterruptionNotice
	acked   []cloudprovider.InterruptionNotice
}

func (s *ackingSource) Interruptions(context.Context) ([]cloudprovider.InterruptionNotice, error) {
	return s.notices, nil
}

func (s *ackingSource) Acknowledge(_ context.Context, ns []cloudprovider.InterruptionNotice) error {
	s.acked = append(s.acked, ns...)
	return nil
}

// Once its effects are applied, the controller acknowledges the notices
// it acted on for good (an interruption, a reported rebalance
// recommendation) and not one no NodeClaim owns, so a source that keeps
// notices drops the first and keeps the last.
func TestInterruptionAcknowledges(t *testing.T) {
	h := newHarness(t, true)
	g := h.g
	np := h.nodePool()
	interrupted, _ := h.node(np, "4")
	advised, _ := h.node(np, "4")
	spot := cloudprovider.InterruptionNotice{Kind: cloudprovider.SpotInterruption, ProviderID: interrupted.Status.ProviderID, InstanceType: "m5.xlarge", Zone: "zone-a",
		Deadline: h.clk.Now().Add(2 * time.Minute).Truncate(time.Second)}
	rebalance := cloudprovider.InterruptionNotice{Kind: cloudprovider.RebalanceRecommendation, ProviderID: advised.Status.ProviderID, InstanceType: "m5.xlarge", Zone: "zone-a"}
	unowned := cloudprovider.InterruptionNotice{Kind: cloudprovider.SpotInterruption, ProviderID: "aws:///zone-a/i-0123456789abcdef0", Deadline: spot.Deadline}
	src := &ackingSource{notices: []cloudprovider.InterruptionNotice{spot, rebalance, unowned}}
	r := NewInterruption(InterruptionDeps{Client: h.c, Source: src, Ack: src, Applier: h.newApplier(cloudprovider.NewUnavailableOfferings(h.clk, 0)), Clock: h.clk}, InterruptionOptions{})
	_, err := r.Reconcile(h.ctx, reconcile.Request{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(src.acked).To(gomega.ConsistOf(spot, rebalance))
}
