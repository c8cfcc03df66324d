package disruption

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Drift reasons, as the Drifted condition reports them.
const (
	// DriftNodePool: the NodePool's static fields (spec.template but its
	// requirements) changed since the NodeClaim was created (decision 13).
	DriftNodePool = "NodePoolDrifted"
	// DriftRequirements: the NodeClaim's labels no longer satisfy the
	// NodePool's requirements.
	DriftRequirements = "RequirementsDrifted"
)

// Drifted says why nc no longer matches np, "" if it still does:
//   - its NodePool hash differs from np's, written with the same hash
//     version (a NodeClaim stamped by another hash version is not judged
//     by hash: the two hashes are not comparable);
//   - its labels fail a requirement of np. Widening a requirement so the
//     node still matches (adding m5.large to an In list the node's type is
//     already in) is not drift, and a well-known label the NodeClaim does
//     not carry is the cloud's to set, not a mismatch.
//
// Behavioural fields (weight, limits, disruption) are never drift: the hash
// leaves them out. What the cloud provider reports (IsDrifted) is the
// caller's third source.
func Drifted(nc *v1.NodeClaim, np *v1.NodePool) string {
	if nc.Annotations[v1.NodePoolHashVersionAnnotationKey] == v1.NodePoolHashVersion {
		if hash, ok := nc.Annotations[v1.NodePoolHashAnnotationKey]; ok && hash != np.Hash() {
			return DriftNodePool
		}
	}
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
	for key, r := range reqs {
		if _, ok := nc.Labels[key]; !ok && scheduling.IsWellKnown(key) {
			continue
		}
		if err := (scheduling.Requirements{key: r}).Matches(nc.Labels); err != nil {
			return DriftRequirements
		}
	}
	return ""
}

// Drift replaces drifted nodes (their Drifted condition is True): empty
// ones are deleted together, as many per NodePool as the Drifted budget
// allows; otherwise as many busy ones as that budget allows, with
// replacements pre-spun for the pods other nodes cannot take. A node
// whose pods would fit nowhere stays, and the verdict says which pod.
type Drift struct{}

// Name implements Method.
func (Drift) Name() string { return "Drift" }

// Reason implements Method.
func (Drift) Reason() v1.DisruptionReason { return v1.DisruptionReasonDrifted }

// Compute implements Method.
func (d Drift) Compute(env Env) Outcome {
	return replaceMarked(env, d, v1.ConditionTypeDrifted)
}

// Eventual implements Eventual, as the reference's Drift is of the
// eventual class.
func (Drift) Eventual() {}

// ExpectedInterruption replaces nodes the cloud will take away later
// (their InterruptionExpected condition is True: a preemptible VM nearing
// its 24-hour limit, a rebalance recommendation the NodePool opted into)
// the way Drift replaces drifted ones, within the Drifted budget
// (decision 18), before the notice turns into an interruption.
type ExpectedInterruption struct{}

// Name implements Method.
func (ExpectedInterruption) Name() string { return "ExpectedInterruption" }

// Reason implements Method.
func (ExpectedInterruption) Reason() v1.DisruptionReason { return v1.DisruptionReasonDrifted }

// Compute implements Method.
func (e ExpectedInterruption) Compute(env Env) Outcome {
	return replaceMarked(env, e, v1.ConditionTypeInterruptionExpected)
}

// replaceMarked is Drift's and ExpectedInterruption's shared rule over
// the candidates whose condition is True.
func replaceMarked(env Env, m Method, condition string) Outcome {
	out := Outcome{Command: Command{Method: m.Name(), Reason: m.Reason()}}
	var busy []Candidate
	taken := map[string]int{}
	// The longest marked first, empty or busy, as the reference orders
	// drifted nodes: a budget that cannot take every empty node takes
	// those that have waited longest. Sorted on a copy: the methods share
	// the slice.
	candidates := slices.Clone(env.Candidates)
	since := func(c Candidate) time.Time {
		if cond := meta.FindStatusCondition(c.NodeClaim.Status.Conditions, condition); cond != nil {
			return cond.LastTransitionTime.Time
		}
		return time.Time{}
	}
	slices.SortStableFunc(candidates, func(a, b Candidate) int { return since(a).Compare(since(b)) })
	var static []Candidate
	for _, c := range candidates {
		if !meta.IsStatusConditionTrue(c.NodeClaim.Status.Conditions, condition) || !out.admit(c, m, EventDisruptionBlocked, env) {
			continue
		}
		if pool := c.NodePool.Name; c.NodePool.Static() {
			static = append(static, c)
		} else if len(c.Pods) > 0 {
			busy = append(busy, c)
		} else if taken[pool] < env.Allowed[pool] {
			taken[pool]++
			out.Command.Candidates = append(out.Command.Candidates, c)
		}
	}
	if len(out.Command.Candidates) > 0 {
		return out
	}
	// A static NodePool's node, empty or busy, is replaced one for one by
	// a replica from its template, launched first (docs/static.md).
	for _, c := range static {
		if env.StaticReplacements[c.NodePool.Name] > 0 {
			out.Command.Candidates, out.Command.Replacements = []Candidate{c}, []*provisioning.NodeClaim{provisioning.StaticNodeClaim(c.NodePool)}
			return out
		}
	}
	// Busy ones: as many as the budget allows, their pods solved together
	// so two never count on the same free room. The reference starts one
	// command per node until the budget is spent (drift.go
	// ComputeCommands); here they are one command (docs/disruption.md,
	// "Drift").
	var sim Simulation
	for _, c := range busy {
		pool := c.NodePool.Name
		if taken[pool] >= env.Allowed[pool] {
			continue
		}
		with := env.Simulate(append(slices.Clone(out.Command.Candidates), c))
		if len(with.Unplaced) > 0 {
			alone := with
			if len(out.Command.Candidates) > 0 {
				alone = env.Simulate([]Candidate{c})
			}
			// A node that would go alone but not beside those taken waits
			// for a later command.
			if len(alone.Unplaced) > 0 {
				u := alone.Unplaced[0]
				out.Verdicts = append(out.Verdicts, verdict(c, m, EventDisruptionBlocked, VerdictUnschedulable,
					fmt.Sprintf("pod %s/%s would not schedule without the node: %s", u.Pod.Namespace, u.Pod.Name, u.Message)))
			}
			continue
		}
		taken[pool]++
		out.Command.Candidates, sim = append(out.Command.Candidates, c), with
	}
	out.Command.Replacements = sim.Replacements
	return out
}

// DriftCondition is the Drifted condition nc should carry, nil when it
// should carry none: with the Drift gate off no NodeClaim is drifted
// (seed 004); reason is Drifted's own, else the cloud's (cloudReason).
func DriftCondition(nc *v1.NodeClaim, np *v1.NodePool, cloudReason string, gate bool, now time.Time) *metav1.Condition {
	if !gate {
		return nil
	}
	reason := Drifted(nc, np)
	if reason == "" {
		reason = cloudReason
	}
	if reason == "" {
		return nil
	}
	msg, ok := driftMessages[reason]
	if !ok {
		msg = "the cloud provider reports the instance drifted from its NodeClass"
	}
	return &metav1.Condition{Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: reason,
		Message: msg, LastTransitionTime: metav1.NewTime(now)}
}

var driftMessages = map[string]string{
	DriftNodePool:     "the NodePool's template changed since the node was launched",
	DriftRequirements: "the node's labels no longer satisfy the NodePool's requirements",
}
