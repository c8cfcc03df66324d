package simulator

import (
	"context"
	"fmt"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/interruption"
)

// interrupt is the interruption controller: the cloud's notices through
// the same interruption.Handler, its effects applied to the world. An
// interrupted NodeClaim is deleted at the notice with its deadline, so
// the provisioner launches its replacements at once and terminate drains
// it by the deadline.
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
	for _, a := range d.Actions {
		if a.Received || a.Event != "" {
			// The report remembers why the instance ends; the event is
			// an effect.
			s.rec.notice(now, a.Notice, "")
		}
	}
	return s.applyChanges(ctx, d.Effects)
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
	return s.applyChanges(ctx, disruption.DrainBlocks(drains, now))
}

// expire is the expiration controller: NodeClaims past their expireAfter
// are deleted, whatever budgets and do-not-disrupt say.
func (s *Simulator) expire(ctx context.Context) (bool, error) {
	now := s.clock.Now()
	var effs []effects.Effect
	for _, nc := range s.world.sortedClaims() {
		expired, _ := disruption.Expire(nc, now)
		effs = append(effs, expired...)
	}
	return s.applyChanges(ctx, effs)
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

// applyChanges applies effs to the world and reports whether any of them
// changes it (events and metrics do not); a change wakes the steps that
// watch the world, as a watch event would the controllers.
func (s *Simulator) applyChanges(ctx context.Context, effs []effects.Effect) (bool, error) {
	if err := s.applyEffects(ctx, effs); err != nil {
		return false, err
	}
	for _, e := range effs {
		switch e.(type) {
		case effects.Event, effects.Metric:
		default:
			s.world.changed()
			return true, nil
		}
	}
	return false, nil
}
