package simulator

import (
	"context"
	"fmt"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/budgets"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// DisruptionOptions mean what the controller's disruption flags do.
type DisruptionOptions struct {
	// Gates are the feature gates.
	Gates              disruption.Gates
	PollInterval       time.Duration
	ValidationDelay    time.Duration
	ReplacementTimeout time.Duration
	// PreemptibleMargin: interruption.Options.
	PreemptibleMargin time.Duration
}

// disrupter is the disruption controller's state in a run: the same
// Engine, ticked at the controller's poll interval, but only when a tick
// could decide something new, so a cluster where nothing can be
// disrupted does not re-plan every ten seconds.
type disrupter struct {
	engine *disruption.Engine
	// next is the earliest the engine ticks again. idle is set when the
	// last plan found no command in the world of version; it plans again
	// only once that world changes, a NodeClaim becomes consolidatable
	// (consolidatable), or at revisit: a budget window opens or closes,
	// or verdicts are due again (every EventInterval, as the
	// controller's rate limit lets them through).
	next           time.Time
	idle           bool
	version        int
	revisit        time.Time
	consolidatable time.Time
	// judged is when NodeClaims' conditions are next judged even if the
	// world did not change: the cloud drifts on its own (a reservation
	// ends), as the controller's conditions are re-judged every
	// disruption.CloudDriftPoll.
	judged time.Time
}

func newDisrupter(opts DisruptionOptions, name func(string) string, repair []cloudprovider.RepairPolicy) *disrupter {
	return &disrupter{engine: disruption.NewEngine(disruption.Options{
		Methods: disruption.WithRepair(disruption.Methods(opts.Gates), opts.Gates, repair), ValidationDelay: opts.ValidationDelay, ReplacementTimeout: opts.ReplacementTimeout, Name: name,
	})}
}

// due reports whether the engine should tick at now.
func (d *disrupter) due(now time.Time, version int) bool {
	if o, ok := d.engine.Active(); ok {
		return o.Phase == disruption.PhaseReplacing || !now.Before(d.next)
	}
	if now.Before(d.next) {
		return false
	}
	reached := func(t time.Time) bool { return !t.IsZero() && !now.Before(t) }
	return !d.idle || version != d.version || reached(d.consolidatable) || reached(d.revisit)
}

// wake is when the engine wants to tick next, if at all, and when the
// conditions are next judged.
func (d *disrupter) wake(version int) []time.Time {
	if _, ok := d.engine.Active(); ok || !d.idle || version != d.version {
		return []time.Time{d.next, d.consolidatable, d.judged}
	}
	return []time.Time{d.consolidatable, d.judged, d.revisit}
}

// stampPodEvents is the controller's pod-events controller: a NodeClaim's
// lastPodEventTime moves to now when a pod bound to or left its node
// (at most every lifecycle.PodEventDedupe), so consolidateAfter counts
// from there.
func (s *Simulator) stampPodEvents(ctx context.Context) (bool, error) {
	if len(s.world.podEvents) == 0 {
		return false, nil
	}
	now := s.clock.Now()
	var effs []effects.Effect
	for _, nc := range s.world.sortedClaims() {
		if s.world.podEvents[nc.Status.NodeName] {
			effs = append(effs, lifecycle.PodEvent(nc, now)...)
		}
	}
	clear(s.world.podEvents)
	return false, s.applyEffects(ctx, effs)
}

// disrupt is the disruption controller: NodeClaims' Drifted and
// Consolidatable conditions, then the engine's tick applied to the world.
func (s *Simulator) disrupt(ctx context.Context) (bool, error) {
	now := s.clock.Now()
	d := s.disrupter
	due := d.due(now, s.world.version)
	if !due && (d.judged.IsZero() || now.Before(d.judged)) {
		return false, nil
	}
	changed, err := s.updateConditions(ctx, now)
	if err != nil {
		return false, err
	}
	d.judged = time.Time{}
	if len(s.world.claims) > 0 {
		d.judged = now.Add(disruption.CloudDriftPoll)
	}
	for _, nc := range s.world.claims {
		if nc.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeReserved {
			d.judged = now.Add(disruption.ReservationPoll)
			break
		}
	}
	if !due {
		if changed {
			// A condition changed on its own: the engine must look.
			s.world.changed()
		}
		return changed, nil
	}
	var in disruption.Input
	if o, ok := d.engine.Active(); !ok || o.Phase == disruption.PhaseValidating {
		objs := s.world.objects()
		snapshot, err := s.snapshotOf(ctx, objs)
		if err != nil {
			return false, err
		}
		in = disruption.NewInput(objs, snapshot, disruption.Policies{MinValues: s.opts.MinValuesPolicy, Preference: s.opts.PreferencePolicy})
		in.Pods, in.Snapshot.Input.TermRequests = scaleup.PinFlavors(in.Pods, s.world.openModels(in.Pods))
		in.Unavailable = s.unavailable.History()
	}
	version := s.world.version
	tick, err := d.engine.Tick(in, s.replacements(), now)
	if err != nil {
		return false, fmt.Errorf("evaluating disruption, %w", err)
	}
	d.next = now.Add(s.opts.Disruption.PollInterval)
	if !tick.WakeAt.IsZero() && tick.WakeAt.Before(d.next) {
		d.next = tick.WakeAt
	}
	if tick.Planned != nil {
		d.idle, d.version, d.revisit = !tick.Planned.Found, version, s.revisitAt(in, tick, now)
		s.rec.scored(now, tick.Planned.Scores)
	}
	applied, err := s.applyTick(ctx, tick, now)
	return applied || changed, err
}

// revisitAt is when an idle engine must plan again though nothing in the
// world changed: when verdicts are due again, the engine wakes (an
// unavailable mark ends: disruption.Unsettles), the next budget window
// opens or closes, or the cloud profile's next event changes capacity;
// zero when nothing waits on time.
func (s *Simulator) revisitAt(in disruption.Input, tick disruption.Tick, now time.Time) time.Time {
	d := tick.Planned
	var at time.Time
	earliest := func(t time.Time) {
		if t.After(now) && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	for _, n := range d.Eligible {
		if n > 0 || len(d.Verdicts) > 0 {
			earliest(now.Add(disruption.DefaultEventInterval))
		}
	}
	earliest(d.WakeAt)
	earliest(tick.WakeAt)
	earliest(s.capacityChanges.after(now))
	for _, np := range in.NodePools {
		statuses, _, err := budgets.Evaluate(np, now)
		if err != nil {
			continue
		}
		for _, b := range statuses {
			earliest(b.Change)
		}
	}
	return at
}

// updateConditions keeps each NodeClaim's Drifted and Consolidatable
// conditions, as the controller's conditions controller does, and notes
// when the next one becomes consolidatable.
func (s *Simulator) updateConditions(ctx context.Context, now time.Time) (bool, error) {
	pools := map[string]*v1.NodePool{}
	for i := range s.world.nodePools {
		pools[s.world.nodePools[i].Name] = &s.world.nodePools[i]
	}
	changed := false
	s.disrupter.consolidatable = time.Time{}
	for _, nc := range s.world.sortedClaims() {
		np := pools[nc.Labels[v1.NodePoolLabelKey]]
		if np == nil || nc.DeletionTimestamp != nil || nc.Status.ProviderID == "" {
			continue
		}
		if nc.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeReserved {
			released, err := s.releaseReservation(ctx, nc, now)
			if err != nil {
				return false, err
			}
			changed = changed || released
		}
		var cloudReason string
		if s.opts.Disruption.Gates.Drift {
			reason, err := s.cloud.IsDrifted(ctx, nc)
			if err != nil {
				return false, fmt.Errorf("asking the cloud whether nodeclaim %s drifted, %w", nc.Name, err)
			}
			cloudReason = string(reason)
		}
		effs, at := disruption.Conditions(nc, np, cloudReason, s.opts.Disruption.Gates.Drift, now)
		if err := s.applyEffects(ctx, effs); err != nil {
			return false, err
		}
		changed = changed || len(effs) > 0
		if !at.IsZero() && (s.disrupter.consolidatable.IsZero() || at.Before(s.disrupter.consolidatable)) {
			s.disrupter.consolidatable = at
		}
	}
	return changed, nil
}

// releaseReservation is the conditions controller's relabelling of a
// node whose capacity reservation ended (lifecycle.ReservationEnded),
// and the record repriced.
func (s *Simulator) releaseReservation(ctx context.Context, nc *v1.NodeClaim, now time.Time) (bool, error) {
	instance, err := s.cloud.Get(ctx, nc.Status.ProviderID)
	if err != nil {
		return false, cloudprovider.IgnoreNodeClaimNotFound(err)
	}
	price := s.cloudPrices()[nc.Status.ProviderID]
	effs := lifecycle.ReservationEnded(nc, s.world.nodeOf(nc), instance, &price)
	if len(effs) == 0 {
		return false, nil
	}
	if err := s.applyEffects(ctx, effs); err != nil {
		return false, err
	}
	s.rec.repriced(now, nc.Name, price)
	return true, nil
}

// replacements observes the command's replacement NodeClaims.
func (s *Simulator) replacements() map[string]disruption.ReplacementStatus {
	out := map[string]disruption.ReplacementStatus{}
	for _, name := range s.disrupter.engine.Replacements() {
		out[name] = disruption.ReplacementStatusOf(s.world.claims[name])
	}
	return out
}

// applyTick applies a tick's effects to the world, as the controller
// does through the API server, and records the command's progress in
// the report.
func (s *Simulator) applyTick(ctx context.Context, tick disruption.Tick, now time.Time) (bool, error) {
	for _, a := range tick.Actions {
		for _, cand := range a.Candidates {
			switch a.Kind {
			case disruption.ActionTaint:
				s.rec.disrupted(now, cand.NodeClaim.Name)
			case disruption.ActionUntaint:
				s.rec.undisrupted(cand.NodeClaim.Name)
			}
		}
	}
	return s.applyChanges(ctx, tick.Effects)
}
