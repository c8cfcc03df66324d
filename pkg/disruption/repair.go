package disruption

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// DefaultRepairBudget bounds a NodePool's repairs when its
// capstan.dev/repair-budget is unset: the reference's breaker
// (kubernetes-sigs/karpenter pkg/controllers/node/health/controller.go,
// allowedUnhealthyPercent), which capstan.dev/repair-max-unhealthy
// defaults to in turn.
const DefaultRepairBudget = "20%"

// Node repair's event reason (the reference's events.NodeRepairBlocked),
// its verdict code for the breaker and its counter.
const (
	EventNodeRepairBlocked = "NodeRepairBlocked"
	// VerdictTooManyUnhealthy: more of the NodePool's nodes are unhealthy
	// than its capstan.dev/repair-max-unhealthy, so none is repaired.
	VerdictTooManyUnhealthy VerdictCode = "TooManyUnhealthy"
	// MetricRepaired counts unhealthy NodeClaims repaired, by NodePool
	// and the node condition that made them unhealthy.
	MetricRepaired = "capstan_disruption_repairs_total"
)

// RepairLimits are a NodePool's repair budget and breaker, each a count
// or a percentage of its nodes.
type RepairLimits struct {
	Budget, MaxUnhealthy string
}

// RepairLimitsOf reads np's capstan.dev/repair-budget (default
// DefaultRepairBudget) and capstan.dev/repair-max-unhealthy (default the
// budget). An error names the value Capstan does not know, as an
// *AnnotationError: the NodePool's ValidationSucceeded condition reports
// it, and its nodes are not repaired.
func RepairLimitsOf(np *v1.NodePool) (RepairLimits, error) {
	l := RepairLimits{Budget: DefaultRepairBudget}
	for _, a := range []struct {
		key string
		to  *string
	}{{v1.RepairBudgetAnnotationKey, &l.Budget}, {v1.RepairMaxUnhealthyAnnotationKey, &l.MaxUnhealthy}} {
		v, ok := np.Annotations[a.key]
		if !ok {
			continue
		}
		if _, err := budgetNodes(v, 0); err != nil {
			return RepairLimits{}, &AnnotationError{Key: a.key, Problem: fmt.Sprintf("%q is not a count or a percentage (\"20%%\")", v)}
		}
		*a.to = v
	}
	if l.MaxUnhealthy == "" {
		l.MaxUnhealthy = l.Budget
	}
	return l, nil
}

// nodes are the limits for a NodePool of total nodes: percentages
// rounded up, as the reference's breaker and PodDisruptionBudgets round.
// The values were checked by RepairLimitsOf.
func (l RepairLimits) nodes(total int) (budget, maxUnhealthy int) {
	budget, _ = budgetNodes(l.Budget, total)
	maxUnhealthy, _ = budgetNodes(l.MaxUnhealthy, total)
	return budget, maxUnhealthy
}

// Unhealth is why a node is unhealthy: the condition a repair policy
// names, since when it has held, and when the node is due for repair.
type Unhealth struct {
	Condition corev1.NodeConditionType
	Status    corev1.ConditionStatus
	Since     time.Time
	Due       time.Time
}

// UnhealthOf is the policy node matches that comes due first (the
// reference's findUnhealthyConditions); false when it matches none.
func UnhealthOf(node *corev1.Node, policies []cloudprovider.RepairPolicy) (Unhealth, bool) {
	var out Unhealth
	found := false
	for _, p := range policies {
		for _, c := range node.Status.Conditions {
			if c.Type != p.ConditionType || c.Status != p.ConditionStatus {
				continue
			}
			due := c.LastTransitionTime.Add(p.TolerationDuration)
			if !found || due.Before(out.Due) {
				out, found = Unhealth{Condition: c.Type, Status: c.Status, Since: c.LastTransitionTime.Time, Due: due}, true
			}
		}
	}
	return out, found
}

// poolHealth is one NodePool's nodes as repair counts them.
type poolHealth struct {
	total, unhealthy, repairing int
}

// healthByPool counts every candidate's NodePool's nodes, unhealthy ones
// (due or not, deleting or not, as the reference's breaker counts them)
// and those repair deleted that are still going.
func healthByPool(all []Candidate, policies []cloudprovider.RepairPolicy) map[string]*poolHealth {
	out := map[string]*poolHealth{}
	for _, c := range all {
		h := out[c.NodePool.Name]
		if h == nil {
			h = &poolHealth{}
			out[c.NodePool.Name] = h
		}
		h.total++
		if _, ok := UnhealthOf(c.Node, policies); ok {
			h.unhealthy++
		}
		if c.NodeClaim.DeletionTimestamp != nil {
			if r := meta.FindStatusCondition(c.NodeClaim.Status.Conditions, v1.ConditionTypeDisruptionReason); r != nil && r.Reason == string(v1.DisruptionReasonUnhealthy) {
				h.repairing++
			}
		}
	}
	return out
}

// Repair replaces unhealthy nodes (docs/disruption.md, "Node repair"): a
// node whose condition has matched one of the cloud provider's repair
// policies for its toleration is replaced pre-spun, its replacement
// initialized before it is deleted and drained at once, as many at a
// time as its NodePool's repair budget allows, and none while more of
// the NodePool's nodes are unhealthy than its breaker allows (a zone
// outage must not empty a cluster). Unlike the reference, whose repair
// deletes the node outright, it waits for capacity to move to. The
// node is broken: do-not-disrupt, PodDisruptionBudgets and the
// NodePool's disruption budgets do not hold it.
type Repair struct {
	Policies []cloudprovider.RepairPolicy
}

// Name implements Method.
func (Repair) Name() string { return "Repair" }

// Reason implements Method.
func (Repair) Reason() v1.DisruptionReason { return v1.DisruptionReasonUnhealthy }

// OwnBudget implements SelfBudgeted: the repair budget, not the
// NodePool's disruption budgets, limits it.
func (Repair) OwnBudget() {}

// WithRepair is methods after Repair over policies, with the NodeRepair
// gate on and policies to repair by; methods otherwise. A broken node is
// replaced before any voluntary method runs.
func WithRepair(methods []Method, g Gates, policies []cloudprovider.RepairPolicy) []Method {
	if !g.NodeRepair || len(policies) == 0 {
		return methods
	}
	return append([]Method{Repair{Policies: policies}}, methods...)
}

// RepairState is what repair makes of one node.
type RepairState struct {
	Unhealthy bool
	Unhealth  Unhealth
	// Verdict is why a due node is not repaired now; empty when it may
	// be (or is not due).
	Verdict Verdict
}

// Compute implements Method.
func (r Repair) Compute(env Env) Outcome {
	out := Outcome{Command: Command{Method: r.Name(), Reason: r.Reason()}}
	health := healthByPool(env.All, r.Policies)
	taken := map[string]int{}
	due := slices.Clone(env.Candidates)
	unhealth := map[string]Unhealth{}
	due = slices.DeleteFunc(due, func(c Candidate) bool {
		u, ok := UnhealthOf(c.Node, r.Policies)
		if !ok || c.BlockedFor(r) != "" {
			return true
		}
		if env.Now.Before(u.Due) {
			out.wake(u.Due, env.Now)
			return true
		}
		unhealth[c.NodeClaim.Name] = u
		return false
	})
	// The longest due first, as the reference requeues by due time.
	slices.SortStableFunc(due, func(a, b Candidate) int {
		return unhealth[a.NodeClaim.Name].Due.Compare(unhealth[b.NodeClaim.Name].Due)
	})
	for _, c := range due {
		out.Eligible++
		u := unhealth[c.NodeClaim.Name]
		if v, held := r.held(c, u, health[c.NodePool.Name], taken[c.NodePool.Name]); held {
			out.Verdicts = append(out.Verdicts, v)
			continue
		}
		taken[c.NodePool.Name]++
		out.Command.Candidates = append(out.Command.Candidates, c)
		out.Command.Deleting = append(out.Command.Deleting, repaired(c, u, env.Now)...)
	}
	out.Command.Replacements = repairReplacements(out.Command.Candidates, env)
	return out
}

// repairReplacements are what repaired candidates' replacements launch
// first. A static NodePool's node is replaced one for one by a replica
// from its template while the pool has room (env.StaticReplacements), as
// drift replaces it: the solver never solves for static pools
// (docs/static.md). Of the others, pods that fit nowhere do not hold a
// broken node: they are not running anyway.
func repairReplacements(candidates []Candidate, env Env) []*provisioning.NodeClaim {
	var dynamic []Candidate
	var out []*provisioning.NodeClaim
	taken := map[string]int64{}
	for _, c := range candidates {
		if !c.NodePool.Static() {
			dynamic = append(dynamic, c)
			continue
		}
		if taken[c.NodePool.Name] < env.StaticReplacements[c.NodePool.Name] {
			taken[c.NodePool.Name]++
			out = append(out, provisioning.StaticNodeClaim(c.NodePool))
		}
	}
	if len(dynamic) > 0 {
		out = append(out, env.Simulate(dynamic).Replacements...)
	}
	return out
}

// held is why a due candidate waits: its NodePool's annotations are
// invalid, more of its nodes are unhealthy than its breaker allows, or
// its repair budget is spent (by repairs still going, or taken by
// earlier candidates of this pass).
func (r Repair) held(c Candidate, u Unhealth, h *poolHealth, taken int) (Verdict, bool) {
	limits, err := RepairLimitsOf(c.NodePool)
	if err != nil {
		return verdict(c, r, EventNodeRepairBlocked, VerdictBlocked, fmt.Sprintf("nodepool %s: %v", c.NodePool.Name, err)), true
	}
	budget, maxUnhealthy := limits.nodes(h.total)
	switch {
	case h.unhealthy > maxUnhealthy:
		return verdict(c, r, EventNodeRepairBlocked, VerdictTooManyUnhealthy, fmt.Sprintf(
			"%d of nodepool %s's %d nodes are unhealthy, more than its repair-max-unhealthy %s (%d): repairing none",
			h.unhealthy, c.NodePool.Name, h.total, limits.MaxUnhealthy, maxUnhealthy)), true
	case h.repairing+taken >= budget:
		return verdict(c, r, EventNodeRepairBlocked, VerdictBudget, fmt.Sprintf(
			"%s %s since %s: repair budget %s (%d) of nodepool %s is in use by %d repair(s)",
			u.Condition, u.Status, u.Since.UTC().Format(time.RFC3339), limits.Budget, budget, c.NodePool.Name, h.repairing+taken)), true
	}
	return Verdict{}, false
}

// repaired are what deleting a repaired candidate adds: the drain's
// deadline now (the reference's repair ignores terminationGracePeriod:
// the node's pods are not running) and the repair counted.
func repaired(c Candidate, u Unhealth, now time.Time) []effects.Effect {
	return []effects.Effect{
		effects.MergeMetadata{Object: effects.NodeClaimRef(c.NodeClaim.Name),
			Annotations: map[string]string{v1.NodeClaimTerminationTimestampAnnotationKey: now.UTC().Format(time.RFC3339)}},
		effects.Metric{Name: MetricRepaired, Labels: []string{c.NodePool.Name, string(u.Condition)}, Value: 1},
	}
}

// RepairStateOf is what repair makes of candidate c among all now, for
// `capstan explain node`: whether it is unhealthy, since when and when
// it is due, and, once due, what holds it (an empty Verdict: nothing).
func (r Repair) RepairStateOf(c Candidate, all []Candidate, now time.Time) RepairState {
	u, ok := UnhealthOf(c.Node, r.Policies)
	if !ok {
		return RepairState{}
	}
	st := RepairState{Unhealthy: true, Unhealth: u}
	if now.Before(u.Due) {
		return st
	}
	st.Verdict, _ = r.held(c, u, healthByPool(all, r.Policies)[c.NodePool.Name], 0)
	return st
}
