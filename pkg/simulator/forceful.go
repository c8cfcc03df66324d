package simulator

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/interruption"
)

// interrupt is the interruption controller: the cloud's notices through
// the same interruption.Handler, applied to the world. An interrupted
// NodeClaim is deleted at the notice with its deadline, so the
// provisioner launches its replacements at once and terminate drains it
// by the deadline.
func (s *Simulator) interrupt(ctx context.Context) (bool, error) {
	now := s.clock.Now()
	notices, err := s.cloud.Interruptions(ctx)
	if err != nil {
		return false, fmt.Errorf("reading interruption notices, %w", err)
	}
	claims := map[string]interruption.Claim{}
	for _, nc := range s.world.sortedClaims() {
		if nc.Status.ProviderID != "" {
			claims[nc.Status.ProviderID] = interruption.Claim{NodeClaim: nc, NodePool: s.world.nodePool(nc.Labels[v1.NodePoolLabelKey])}
		}
	}
	d := s.interruptions.Step(notices, claims, now)
	s.interruptWake = d.WakeAt
	changed := false
	for _, a := range d.Actions {
		n := a.Notice
		nc := claims[n.ProviderID].NodeClaim
		if a.Received || a.Event != "" {
			s.rec.notice(now, n, a.Event)
		}
		if a.MarkUnavailable {
			s.unavailable.MarkUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: n.InstanceType, Zone: n.Zone}, string(n.Kind))
		}
		if a.Expect {
			meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeInterruptionExpected, Status: metav1.ConditionTrue,
				Reason: string(n.Kind), Message: n.Message, LastTransitionTime: metav1.NewTime(now)})
			s.world.changed()
			changed = true
		}
		if a.Interrupt {
			changed = s.deleteForcefully(nc, v1.DisruptionReasonInterrupted, fmt.Sprintf("interrupted (%s)", n.Kind), n.Deadline, now) || changed
		}
	}
	return changed, nil
}

// drainBlocks is the capacity-block controller: the nodes of a capacity
// block are deleted, with its reclaim as their deadline, before the cloud
// reclaims them (disruption.CapacityBlockDrains).
func (s *Simulator) drainBlocks(ctx context.Context) (bool, error) {
	blocks, err := s.cloud.CapacityBlocks(ctx)
	if err != nil {
		return false, fmt.Errorf("reading capacity blocks, %w", err)
	}
	now := s.clock.Now()
	drains, wake := disruption.CapacityBlockDrains(s.world.sortedClaims(), blocks, now)
	s.blockWake = wake
	changed := false
	for _, d := range drains {
		changed = s.deleteForcefully(d.NodeClaim, v1.DisruptionReasonInterrupted, d.Message, d.Deadline, now) || changed
	}
	return changed, nil
}

// expire is the expiration controller: NodeClaims past their expireAfter
// are deleted, whatever budgets and do-not-disrupt say.
func (s *Simulator) expire(context.Context) (bool, error) {
	now := s.clock.Now()
	changed := false
	for _, nc := range s.world.sortedClaims() {
		if at, ok := disruption.ExpiresAt(nc); ok && nc.DeletionTimestamp == nil && !now.Before(at) {
			msg := fmt.Sprintf("expired: lived for its expireAfter (%s)", nc.Spec.ExpireAfter.String())
			changed = s.deleteForcefully(nc, v1.DisruptionReasonExpired, msg, time.Time{}, now) || changed
		}
	}
	return changed, nil
}

// expiries are when NodeClaims will expire.
func (s *Simulator) expiries() []time.Time {
	var out []time.Time
	for _, nc := range s.world.sortedClaims() {
		if at, ok := disruption.ExpiresAt(nc); ok && nc.DeletionTimestamp == nil {
			out = append(out, at)
		}
	}
	return out
}

// deleteForcefully is the controllers' forceful deletion: the reason and
// deadline recorded (disruption.MarkForceful), then the NodeClaim deleted.
func (s *Simulator) deleteForcefully(nc *v1.NodeClaim, reason v1.DisruptionReason, message string, deadline, now time.Time) bool {
	marked := disruption.MarkForceful(nc, reason, message, deadline, now)
	if nc.DeletionTimestamp != nil {
		if marked {
			s.world.changed()
		}
		return marked
	}
	object := "nodeclaim/" + nc.Name
	if node := s.world.nodeOf(nc); node != nil {
		object = "node/" + node.Name
	}
	s.rec.event(now, "DisruptionTerminating", object, message+": deleting the node")
	s.deleteClaim(nc, now)
	return true
}
