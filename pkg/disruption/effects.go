package disruption

import (
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/state"
)

// The counters disruption's effects add to (effects.Metric); the
// controller registers them, simulate ignores them.
const (
	// MetricDecisions counts commands carried out, by method and reason.
	MetricDecisions = "capstan_disruption_decisions_total"
	// MetricDisrupted counts NodeClaims deleted by disruption, voluntary
	// or forceful, by reason.
	MetricDisrupted = "capstan_nodeclaims_disrupted_total"
)

// Event reasons of a command's progress and of forceful deletions.
const (
	EventDisruptionLaunching   = "DisruptionLaunching"
	EventDisruptionTerminating = "DisruptionTerminating"
)

// Disrupt marks a candidate as being disrupted: the karpenter.sh/disrupted
// NoSchedule taint on its node, so nothing new lands there, and why on
// its NodeClaim's DisruptionReason condition (Undisrupt takes both off).
func Disrupt(nodeClaim, node string, reason v1.DisruptionReason, message string, now time.Time) []effects.Effect {
	return []effects.Effect{
		effects.DisruptedTaint(node, true),
		effects.SetCondition{Object: effects.NodeClaimRef(nodeClaim), Condition: metav1.Condition{Type: v1.ConditionTypeDisruptionReason,
			Status: metav1.ConditionTrue, Reason: string(reason), Message: message, LastTransitionTime: metav1.NewTime(now)}},
	}
}

// Undisrupt takes the disrupted taint off a node and the reason off its
// NodeClaims (none when the node has none): a command abandoned, or one
// lost to a restart (a stale taint), leaves the node as it was.
func Undisrupt(node string, nodeClaims ...string) []effects.Effect {
	out := []effects.Effect{effects.DisruptedTaint(node, false)}
	for _, nc := range nodeClaims {
		out = append(out, effects.RemoveCondition{Object: effects.NodeClaimRef(nc), Type: v1.ConditionTypeDisruptionReason})
	}
	return out
}

// tickEffects are a tick's effects, in the order they apply: stale
// taints off, fresh verdicts reported, a started command's scores
// reported, the command's actions (cmd is the
// command they belong to), backoff annotations, the abandonment
// reported.
func tickEffects(in Input, t Tick, cmd Command, now time.Time) []effects.Effect {
	var out []effects.Effect
	for _, n := range t.Stale {
		var claims []string
		for _, nc := range in.NodeClaims {
			if nc.Status.NodeName == n.Name {
				claims = append(claims, nc.Name)
			}
		}
		out = append(out, Undisrupt(n.Name, claims...)...)
	}
	for _, v := range t.Verdicts {
		// The method is the action: the events API merges events of one
		// object, reason and action into a series whatever their
		// messages, so Emptiness's verdict must not hide under
		// consolidation's.
		for _, obj := range []effects.Ref{effects.NodeClaimRef(v.NodeClaim), effects.NodeRef(v.Node)} {
			out = append(out, effects.Event{Object: obj, Type: corev1.EventTypeNormal, Reason: v.Event, Action: v.Method, Message: v.Message})
		}
		if bad := v.InvalidDoNotDisrupt; bad != nil {
			out = append(out, effects.Event{Object: effects.PodRef(bad.Namespace, bad.Name), Type: corev1.EventTypeWarning,
				Reason: state.EventInvalidDoNotDisrupt, Action: v.Method,
				Message: fmt.Sprintf("invalid %s annotation: %s; the pod is held as for \"true\"", v1.DoNotDisruptAnnotationKey, bad.Message)})
		}
	}
	if t.Started != nil {
		out = append(out, approvedEvents(*t.Started)...)
	}
	for _, a := range t.Actions {
		out = append(out, actionEffects(cmd, a, now)...)
	}
	for _, name := range slices.Sorted(maps.Keys(t.Annotate)) {
		out = append(out, effects.MergeMetadata{Object: effects.NodeClaimRef(name), Annotations: t.Annotate[name]})
	}
	if t.Finished != nil && t.Abandoned != "" {
		for _, c := range cmd.Candidates {
			out = append(out, effects.Event{Object: effects.NodeClaimRef(c.NodeClaim.Name), Type: corev1.EventTypeNormal,
				Reason: EventDisruptionBlocked, Action: "Abandon", Message: fmt.Sprintf("%s abandoned: %s", cmd.Method, t.Abandoned)})
		}
	}
	return out
}

// actionEffects are one orchestration action's effects.
func actionEffects(cmd Command, a Action, now time.Time) []effects.Effect {
	why := fmt.Sprintf("%s (%s)", cmd.Method, cmd.Reason)
	var out []effects.Effect
	switch a.Kind {
	case ActionTaint:
		for _, c := range a.Candidates {
			out = append(out, Disrupt(c.NodeClaim.Name, c.Node.Name, cmd.Reason, cmd.Method, now)...)
		}
	case ActionUntaint:
		for _, c := range a.Candidates {
			out = append(out, Undisrupt(c.Node.Name, c.NodeClaim.Name)...)
		}
	case ActionLaunch:
		for _, nc := range a.NodeClaims {
			// Created with the termination finalizer, as the provisioner's
			// are: a replacement deleted at once is drained too.
			nc = nc.DeepCopy()
			if !slices.Contains(nc.Finalizers, v1.TerminationFinalizer) {
				nc.Finalizers = append(nc.Finalizers, v1.TerminationFinalizer)
			}
			out = append(out, effects.CreateNodeClaim{NodeClaim: nc})
			// Related to the replacement, so two replacements are two
			// events, not one series.
			related := effects.NodeClaimRef(nc.Name)
			msg := fmt.Sprintf("%s: launching replacement nodeclaim %s", why, nc.Name)
			for _, c := range cmd.Candidates {
				for _, obj := range []effects.Ref{effects.NodeClaimRef(c.NodeClaim.Name), effects.NodeRef(c.Node.Name)} {
					out = append(out, effects.Event{Object: obj, Related: &related, Type: corev1.EventTypeNormal,
						Reason: EventDisruptionLaunching, Action: cmd.Method, Message: msg})
				}
			}
		}
	case ActionDelete:
		out = append(out, cmd.Deleting...)
		for _, c := range a.Candidates {
			out = append(out, effects.DeleteNodeClaim{Name: c.NodeClaim.Name})
			for _, obj := range []effects.Ref{effects.NodeClaimRef(c.NodeClaim.Name), effects.NodeRef(c.Node.Name)} {
				out = append(out, effects.Event{Object: obj, Type: corev1.EventTypeNormal, Reason: EventDisruptionTerminating,
					Action: cmd.Method, Message: why + ": deleting the node"})
			}
		}
		out = append(out, effects.Metric{Name: MetricDecisions, Labels: []string{cmd.Method, string(cmd.Reason)}, Value: 1},
			effects.Metric{Name: MetricDisrupted, Labels: []string{string(cmd.Reason)}, Value: float64(len(a.Candidates))})
	}
	return out
}

// Forceful is a forceful method's deletion of nc (expiration, an
// interruption, a capacity block's end): why recorded (MarkForceful: the
// DisruptionReason condition, the drain deadline annotation when
// deadline is set), then, unless it is being deleted already, the
// NodeClaim deleted, counted and reported. The termination controller
// drains it by the deadline, and the provisioner launches replacements
// for its pods at once; budgets, do-not-disrupt and PDBs do not hold it
// past the deadline (seed 004).
func Forceful(nc *v1.NodeClaim, reason v1.DisruptionReason, message string, deadline, now time.Time) []effects.Effect {
	marked := nc.DeepCopy()
	var out []effects.Effect
	if MarkForceful(marked, reason, message, deadline, now) {
		if a, b := nc.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey], marked.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey]; a != b {
			out = append(out, effects.MergeMetadata{Object: effects.NodeClaimRef(nc.Name),
				Annotations: map[string]string{v1.NodeClaimTerminationTimestampAnnotationKey: b}})
		}
		out = append(out, conditionEffects(nc, marked, v1.ConditionTypeDisruptionReason)...)
	}
	if nc.DeletionTimestamp != nil {
		return out
	}
	out = append(out, effects.DeleteNodeClaim{Name: nc.Name}, effects.Metric{Name: MetricDisrupted, Labels: []string{string(reason)}, Value: 1})
	objs := []effects.Ref{effects.NodeClaimRef(nc.Name)}
	if nc.Status.NodeName != "" {
		objs = append(objs, effects.NodeRef(nc.Status.NodeName))
	}
	for _, obj := range objs {
		out = append(out, effects.Event{Object: obj, Type: corev1.EventTypeNormal, Reason: EventDisruptionTerminating,
			Action: string(reason), Message: message + ": deleting the node"})
	}
	return out
}

// Expire is the expiration controller's step for one NodeClaim: its
// forceful deletion once it has lived for its expireAfter, else when to
// look again (zero: never).
func Expire(nc *v1.NodeClaim, now time.Time) ([]effects.Effect, time.Time) {
	at, ok := ExpiresAt(nc)
	if !ok || nc.DeletionTimestamp != nil {
		return nil, time.Time{}
	}
	if now.Before(at) {
		return nil, at
	}
	msg := fmt.Sprintf("expired: lived for its expireAfter (%s)", nc.Spec.ExpireAfter.String())
	return Forceful(nc, v1.DisruptionReasonExpired, msg, time.Time{}, now), time.Time{}
}

// DrainBlocks are the effects of CapacityBlockDrains: each drain a
// forceful deletion with reason Interrupted and the reclaim as its
// deadline.
func DrainBlocks(drains []BlockDrain, now time.Time) []effects.Effect {
	var out []effects.Effect
	for _, d := range drains {
		out = append(out, Forceful(d.NodeClaim, v1.DisruptionReasonInterrupted, d.Message, d.Deadline, now)...)
	}
	return out
}

// Conditions are UpdateConditions as effects: nc's Drifted and
// Consolidatable conditions set or removed where they change, and when
// Consolidatable will flip by itself (zero if it will not).
func Conditions(nc *v1.NodeClaim, np *v1.NodePool, cloudReason string, gate bool, now time.Time) ([]effects.Effect, time.Time) {
	next := nc.DeepCopy()
	_, at := UpdateConditions(next, np, cloudReason, gate, now)
	return conditionEffects(nc, next, v1.ConditionTypeDrifted, v1.ConditionTypeConsolidatable), at
}

// conditionEffects set or remove the conditions of types that differ
// between before and after.
func conditionEffects(before, after *v1.NodeClaim, types ...string) []effects.Effect {
	var out []effects.Effect
	for _, t := range types {
		was, is := meta.FindStatusCondition(before.Status.Conditions, t), meta.FindStatusCondition(after.Status.Conditions, t)
		switch {
		case is == nil && was != nil:
			out = append(out, effects.RemoveCondition{Object: effects.NodeClaimRef(after.Name), Type: t})
		case is != nil && (was == nil || !equality.Semantic.DeepEqual(*was, *is)):
			out = append(out, effects.SetCondition{Object: effects.NodeClaimRef(after.Name), Condition: *is})
		}
	}
	return out
}
