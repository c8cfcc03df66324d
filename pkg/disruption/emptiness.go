package disruption

import (
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Emptiness deletes nodes that run nothing but DaemonSet pods, once the
// NodePool's consolidateAfter has passed since a pod last arrived or left
// (status.lastPodEventTime, else since the NodeClaim was created), under
// either consolidation policy; consolidateAfter Never disables it. Empty
// nodes go in parallel, as many per NodePool as the Empty budget allows.
type Emptiness struct{}

// Name implements Method.
func (Emptiness) Name() string { return "Emptiness" }

// Reason implements Method.
func (Emptiness) Reason() v1.DisruptionReason { return v1.DisruptionReasonEmpty }

// Compute implements Method.
func (e Emptiness) Compute(candidates []Candidate, allowed map[string]int, now time.Time) (Command, bool) {
	cmd := Command{Method: e.Name(), Reason: e.Reason()}
	taken := map[string]int{}
	for _, c := range candidates {
		if c.Blocked != "" || !Empty(c, now) || taken[c.NodePool.Name] >= allowed[c.NodePool.Name] {
			continue
		}
		taken[c.NodePool.Name]++
		cmd.Candidates = append(cmd.Candidates, c)
	}
	return cmd, len(cmd.Candidates) > 0
}

// Empty reports whether c runs no pod that must move and has been so for
// its NodePool's consolidateAfter.
func Empty(c Candidate, now time.Time) bool {
	after := c.NodePool.Spec.Disruption.ConsolidateAfter
	if len(c.Pods) > 0 || after.Never {
		return false
	}
	since := c.NodeClaim.Status.LastPodEventTime.Time
	if since.IsZero() {
		since = c.NodeClaim.CreationTimestamp.Time
	}
	var wait time.Duration
	if after.Duration != nil {
		wait = *after.Duration
	}
	return !now.Before(since.Add(wait))
}
