package disruption

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Emptiness deletes nodes that run nothing but DaemonSet pods, once the
// NodePool's consolidateAfter has passed since a pod last arrived or left
// (status.lastPodEventTime, else since the NodeClaim initialized), under
// either consolidation policy; consolidateAfter Never disables it. Empty
// nodes go in parallel, as many per NodePool as the Empty budget allows.
type Emptiness struct{}

// Name implements Method.
func (Emptiness) Name() string { return "Emptiness" }

// Reason implements Method.
func (Emptiness) Reason() v1.DisruptionReason { return v1.DisruptionReasonEmpty }

// Compute implements Method.
func (e Emptiness) Compute(env Env) Outcome {
	out := Outcome{Command: Command{Method: e.Name(), Reason: e.Reason()}}
	taken := map[string]int{}
	for _, c := range env.Candidates {
		if !ConsolidationAllowed(c.NodePool) || !Empty(c, env.Now) || !out.admit(c, e, EventUnconsolidatable, env) {
			continue
		}
		if pool := c.NodePool.Name; taken[pool] < env.Allowed[pool] {
			taken[pool]++
			out.Command.Candidates = append(out.Command.Candidates, c)
		}
	}
	return out
}

// Empty reports whether c runs no pod that must move and has been so for
// its NodePool's consolidateAfter.
func Empty(c Candidate, now time.Time) bool {
	return len(c.Pods) == 0 && Consolidatable(c.NodeClaim, c.NodePool, now)
}

// Consolidatable reports whether the NodePool's consolidateAfter has
// passed since a pod last arrived at or left nc's node (else since nc
// initialized); never under consolidateAfter: Never.
func Consolidatable(nc *v1.NodeClaim, np *v1.NodePool, now time.Time) bool {
	at, ok := ConsolidatableAt(nc, np)
	return ok && !now.Before(at)
}

// ConsolidatableAt is when nc becomes consolidatable; false under
// consolidateAfter: Never.
func ConsolidatableAt(nc *v1.NodeClaim, np *v1.NodePool) (time.Time, bool) {
	after := np.Spec.Disruption.ConsolidateAfter
	if after.Never {
		return time.Time{}, false
	}
	since := nc.Status.LastPodEventTime.Time
	if since.IsZero() {
		since = initializedAt(nc)
	}
	var wait time.Duration
	if after.Duration != nil {
		wait = *after.Duration
	}
	return since.Add(wait), true
}

// initializedAt is when nc initialized, from when pods could schedule to
// its node, as the reference counts consolidateAfter without a pod event
// (pkg/utils/disruption/disruption.go, IsUnderConsolidateAfter); its
// creation while it has not (or the condition has no time).
func initializedAt(nc *v1.NodeClaim) time.Time {
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeInitialized); c != nil && c.Status == metav1.ConditionTrue && !c.LastTransitionTime.IsZero() {
		return c.LastTransitionTime.Time
	}
	return nc.CreationTimestamp.Time
}

// reportable: blockers worth an event; a node being deleted or still
// initializing is on its way, not stuck.
func reportable(c Candidate) bool {
	return c.Blocked != blockedDeleting && c.Blocked != blockedUninitialized
}
