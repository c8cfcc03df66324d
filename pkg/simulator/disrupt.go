package simulator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/budgets"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/state"
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

func newDisrupter(opts DisruptionOptions, name func(string) string) *disrupter {
	return &disrupter{engine: &disruption.Engine{EventInterval: disruption.DefaultEventInterval, Options: disruption.Options{
		Methods: disruption.Methods(opts.Gates), ValidationDelay: opts.ValidationDelay, ReplacementTimeout: opts.ReplacementTimeout, Name: name,
	}}}
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
		snapshot, err := state.BuildWithCloud(ctx, objs, s.cloud, s.opts.SchedulerNames)
		if err != nil {
			return false, err
		}
		in = disruption.NewInput(objs, snapshot)
		in.Pods = scaleup.PinFlavors(ctx, in.Pods, s.world.model)
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
		d.idle, d.version, d.revisit = !tick.Planned.Found, version, s.revisitAt(in, tick.Planned, now)
	}
	return s.applyTick(tick, now) || changed, nil
}

// revisitAt is when an idle engine must plan again though nothing in the
// world changed: when verdicts are due again, or the next budget window
// opens or closes; zero when nothing waits on time.
func (s *Simulator) revisitAt(in disruption.Input, d *disruption.Decision, now time.Time) time.Time {
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
		c, at := disruption.UpdateConditions(nc, np, cloudReason, s.opts.Disruption.Gates.Drift, now)
		changed = changed || c
		if !at.IsZero() && (s.disrupter.consolidatable.IsZero() || at.Before(s.disrupter.consolidatable)) {
			s.disrupter.consolidatable = at
		}
	}
	return changed, nil
}

// releaseReservation is the conditions controller's relabelling of a
// node whose capacity reservation ended (lifecycle.ReservationReleased):
// NodeClaim and Node on-demand, and the record repriced.
func (s *Simulator) releaseReservation(ctx context.Context, nc *v1.NodeClaim, now time.Time) (bool, error) {
	instance, err := s.cloud.Get(ctx, nc.Status.ProviderID)
	if err != nil {
		return false, cloudprovider.IgnoreNodeClaimNotFound(err)
	}
	if !lifecycle.ReservationReleased(nc, instance) {
		return false, nil
	}
	id := nc.Labels[v1.LabelCapacityReservationID]
	lifecycle.ReleaseReservation(nc.Labels)
	if node := s.world.nodeOf(nc); node != nil {
		lifecycle.ReleaseReservation(node.Labels)
	}
	s.rec.reservationEnded(now, nc.Name, id, s.prices()[nc.Status.ProviderID])
	s.world.changed()
	return true, nil
}

// replacements observes the command's replacement NodeClaims.
func (s *Simulator) replacements() map[string]disruption.ReplacementStatus {
	out := map[string]disruption.ReplacementStatus{}
	for _, name := range s.disrupter.engine.Replacements() {
		nc := s.world.claims[name]
		switch {
		case nc == nil || nc.DeletionTimestamp != nil:
		case meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeInitialized):
			out[name] = disruption.ReplacementInitialized
		default:
			out[name] = disruption.ReplacementLaunching
		}
	}
	return out
}

// applyTick applies a tick to the world, as the controller does through
// the API server, and records it.
func (s *Simulator) applyTick(tick disruption.Tick, now time.Time) bool {
	changed := false
	for _, n := range tick.Stale {
		changed = s.setDisruptedTaint(n.Name, false) || changed
	}
	for _, v := range tick.Verdicts {
		s.rec.event(now, v.Event, "node/"+v.Node, v.Message)
	}
	var cmd disruption.Command
	if o, ok := s.disrupter.engine.Active(); ok {
		cmd = o.Command
	}
	if tick.Finished != nil {
		cmd = *tick.Finished
	}
	why := fmt.Sprintf("%s (%s)", cmd.Method, cmd.Reason)
	for _, a := range tick.Actions {
		changed = true
		for _, cand := range a.Candidates {
			nc := s.world.claims[cand.NodeClaim.Name]
			if nc == nil {
				continue
			}
			switch a.Kind {
			case disruption.ActionTaint:
				s.setDisruptedTaint(cand.Node.Name, true)
				meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue,
					Reason: string(cmd.Reason), Message: cmd.Method, LastTransitionTime: metav1.NewTime(now)})
				s.rec.disrupted(now, nc.Name)
			case disruption.ActionUntaint:
				s.setDisruptedTaint(cand.Node.Name, false)
				meta.RemoveStatusCondition(&nc.Status.Conditions, v1.ConditionTypeDisruptionReason)
				s.rec.undisrupted(nc.Name)
			case disruption.ActionDelete:
				s.rec.event(now, "DisruptionTerminating", "node/"+cand.Node.Name, why+": deleting the node")
				s.deleteClaim(nc, now)
			}
		}
		for _, nc := range a.NodeClaims {
			nc.CreationTimestamp = metav1.NewTime(now)
			nc.Finalizers = []string{v1.TerminationFinalizer}
			s.world.claims[nc.Name] = nc
			for _, cand := range cmd.Candidates {
				s.rec.event(now, "DisruptionLaunching", "node/"+cand.Node.Name, fmt.Sprintf("%s: launching replacement nodeclaim %s", why, nc.Name))
			}
		}
	}
	if tick.Finished != nil && tick.Abandoned != "" {
		for _, cand := range cmd.Candidates {
			s.rec.event(now, disruption.EventDisruptionBlocked, "node/"+cand.Node.Name, fmt.Sprintf("%s abandoned: %s", cmd.Method, tick.Abandoned))
		}
	}
	for name, annotations := range tick.Annotate {
		if nc := s.world.claims[name]; nc != nil {
			if nc.Annotations == nil {
				nc.Annotations = map[string]string{}
			}
			maps.Copy(nc.Annotations, annotations)
			changed = true
		}
	}
	if changed {
		s.world.changed()
	}
	return changed
}

// setDisruptedTaint puts the karpenter.sh/disrupted:NoSchedule taint on
// a node or takes it off; it reports a change.
func (s *Simulator) setDisruptedTaint(name string, on bool) bool {
	node := s.world.nodes[name]
	if node == nil {
		return false
	}
	taint := v1.DisruptedNoScheduleTaint()
	has := slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) })
	switch {
	case on && !has:
		node.Spec.Taints = append(node.Spec.Taints, taint)
	case !on && has:
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) })
	default:
		return false
	}
	s.world.changed()
	return true
}
