package disruption

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Consolidation limits.
const (
	// MinSpotToSpotTypes is how many cheaper instance types a single spot
	// node's spot replacement must be able to launch as (seed 004: the
	// "instance type flexibility" rule), so consolidation never races to
	// the cheapest, most interrupted pool.
	MinSpotToSpotTypes = 15
	// MaxMultiNodeCandidates bounds the prefix multi-node consolidation
	// searches: the binary search then costs at most log2(100) ≈ 7
	// simulations.
	MaxMultiNodeCandidates = 100
)

// Consolidation messages, in the reference's words where it has them.
const (
	msgNotCheaper    = "can't replace with a lower-priced node"
	msgUnknownPrice  = "the node's price is not known"
	msgSpotToSpotOff = "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
)

// consolidation is what the two consolidation methods share: which
// candidates they may take and how a set of them is judged.
type consolidation struct {
	spotToSpot bool
	// balance scores the moves of Balanced NodePools.
	balance balance
}

// eligible are the candidates consolidation may take, those that save
// the most per unit of disruption first (SavingsRatio): under
// WhenEmptyOrUnderutilized or Balanced (with a valid threshold),
// consolidatable, with a known price, admitted (not blocked, within the
// Underutilized budget) and running pods (empty nodes are Emptiness's).
// Equal ratios go by NodeClaim name.
func (c consolidation) eligible(m Method, env Env, out *Outcome) []Candidate {
	var cands []Candidate
	for _, cand := range env.Candidates {
		if policy := cand.NodePool.Spec.Disruption.ConsolidationPolicy; !ConsolidationAllowed(cand.NodePool) || policy != v1.ConsolidationPolicyWhenEmptyOrUnderutilized && policy != v1.ConsolidationPolicyBalanced ||
			len(cand.Pods) == 0 || !Consolidatable(cand.NodeClaim, cand.NodePool, env.Now) || !out.admit(cand, m, EventUnconsolidatable, env) {
			continue
		}
		if !cand.Priced {
			out.Verdicts = append(out.Verdicts, verdict(cand, m, EventUnconsolidatable, VerdictUnpriced, msgUnknownPrice))
			continue
		}
		if err := c.balance.bad[cand.NodePool.Name]; err != nil {
			out.Verdicts = append(out.Verdicts, verdict(cand, m, EventUnconsolidatable, VerdictInvalidThreshold, err.Error()))
			continue
		}
		cands = append(cands, cand)
	}
	ratios := make(map[string]float64, len(cands))
	for _, cand := range cands {
		ratios[cand.NodeClaim.Name] = SavingsRatio(cand)
	}
	slices.SortStableFunc(cands, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(ratios[b.NodeClaim.Name], ratios[a.NodeClaim.Name]), cmp.Compare(a.NodeClaim.Name, b.NodeClaim.Name))
	})
	return cands
}

// judge decides whether cs can go together: their pods fit the other
// nodes plus at most one replacement that costs less than all of them,
// whatever offering it launches as. It returns the command's
// replacements, or why not.
func (c consolidation) judge(env Env, cs []Candidate) ([]*provisioning.NodeClaim, string) {
	sim := env.SimulateKeepingPreferences(cs)
	if len(sim.Unplaced) > 0 {
		u := sim.Unplaced[0]
		if relaxed := env.Simulate(cs); len(relaxed.Unplaced) == 0 {
			// Seed 004: consolidation keeps pods' preferences, or it would
			// undo what launching chose; say which pod holds the node.
			return nil, fmt.Sprintf("pod %s/%s has a preferred affinity or spread which prevents consolidation", u.Pod.Namespace, u.Pod.Name)
		}
		return nil, fmt.Sprintf("not all pods would schedule, pod %s/%s: %s", u.Pod.Namespace, u.Pod.Name, u.Message)
	}
	// Where the pods spread over other nodes and then need two new ones,
	// one new node in the candidate's own zone may still take them all.
	if len(sim.Replacements) > 1 && len(cs) == 1 && env.SimulateInPlace != nil {
		if alone := env.SimulateInPlace(cs[0]); len(alone.Unplaced) == 0 && len(alone.Replacements) == 1 {
			sim = alone
		}
	}
	switch len(sim.Replacements) {
	case 0:
		return nil, ""
	case 1:
	default:
		return nil, fmt.Sprintf("can't replace with one node: the pods need %d", len(sim.Replacements))
	}
	price, allSpot := 0.0, true
	for _, cand := range cs {
		price += cand.Price
		allSpot = allSpot && cand.NodeClaim.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeSpot
	}
	r := sim.Replacements[0]
	// Spot to spot: every candidate is spot and the replacement may be
	// too, with a spot offering to launch as. It is then priced, and
	// launched, as spot only. A replacement that cannot be spot (an
	// on-demand-only NodePool, a reservation, a zone that sells no spot)
	// is no spot-to-spot move: the gate does not hold it.
	spotToSpot := false
	if allSpot && r.Requirements.Get(v1.CapacityTypeLabelKey).Has(v1.CapacityTypeSpot) {
		if spot := restrict(r, scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot)); len(spot.InstanceTypes) > 0 {
			r, spotToSpot = spot, true
		}
	}
	cheaper := Cheaper(r, price)
	if cheaper == nil {
		return nil, msgNotCheaper
	}
	if spotToSpot && !c.spotToSpot {
		return nil, msgSpotToSpotOff
	}
	if spotToSpot && len(cs) == 1 && len(cheaper.InstanceTypes) < MinSpotToSpotTypes {
		return nil, fmt.Sprintf("SpotToSpotConsolidation requires %d cheaper instance type options than the current candidate to consolidate, got %d",
			MinSpotToSpotTypes, len(cheaper.InstanceTypes))
	}
	if spotToSpot && len(cs) == 1 {
		cheaper = cheapest(cheaper, MinSpotToSpotTypes)
	}
	return []*provisioning.NodeClaim{cheaper}, ""
}

// cheapest keeps r's n cheapest instance types, by their cheapest
// available offering r may launch as, or as many of the cheapest as its
// minValues need when that is more. A single spot node's spot replacement
// launches only as these, so the node it becomes is among the cheapest n
// and does not qualify for replacement again at once (consolidation.go
// computeSpotToSpotConsolidation).
func cheapest(r *provisioning.NodeClaim, n int) *provisioning.NodeClaim {
	price := func(it *cloudprovider.InstanceType) float64 {
		low := math.Inf(1)
		for _, o := range it.Offerings {
			if o.IsAvailable() && o.CompatibleWith(r.Requirements) {
				low = min(low, o.Price)
			}
		}
		return low
	}
	its := slices.Clone(r.InstanceTypes)
	slices.SortStableFunc(its, func(a, b *cloudprovider.InstanceType) int {
		return cmp.Or(cmp.Compare(price(a), price(b)), cmp.Compare(a.Name, b.Name))
	})
	met, _ := provisioning.MinValuesMet(r.Requirements, its)
	its = its[:min(len(its), max(n, met))]
	if len(its) == len(r.InstanceTypes) {
		return r
	}
	names := make([]string, len(its))
	for i, it := range its {
		names[i] = it.Name
	}
	out := restrict(r, scheduling.NewRequirement(v1.LabelInstanceType, corev1.NodeSelectorOpIn, names...))
	out.InstanceTypes = its
	return out
}

// Cheaper keeps only r's instance types every available offering of
// which (among those r may launch as) costs less than price, so the
// replacement is cheaper whatever the cloud picks: a replacement that
// could land on on-demand is never priced as spot. Nil when none is.
func Cheaper(r *provisioning.NodeClaim, price float64) *provisioning.NodeClaim {
	var keep []*cloudprovider.InstanceType
	var names []string
	for _, it := range r.InstanceTypes {
		if worst, ok := WorstPrice(it, r.Requirements); ok && worst < price {
			keep = append(keep, it)
			names = append(names, it.Name)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	out := restrict(r, scheduling.NewRequirement(v1.LabelInstanceType, corev1.NodeSelectorOpIn, names...))
	out.InstanceTypes = keep
	return out
}

// WorstPrice is the highest price of an available offering of it that
// reqs allow; false when there is none.
func WorstPrice(it *cloudprovider.InstanceType, reqs scheduling.Requirements) (float64, bool) {
	worst, found := math.Inf(-1), false
	for _, o := range it.Offerings {
		if o.IsAvailable() && o.CompatibleWith(reqs) {
			worst, found = max(worst, o.Price), true
		}
	}
	return worst, found
}

// restrict is a copy of r with req added to its requirements, and only
// the instance types that still have an offering under them.
func restrict(r *provisioning.NodeClaim, req *scheduling.Requirement) *provisioning.NodeClaim {
	out := *r
	out.Requirements = r.Requirements.Clone()
	out.Requirements.Add(req)
	if ct := out.Requirements.Get(v1.CapacityTypeLabelKey); ct.Len() == 1 {
		out.CapacityType = ct.Any()
	}
	out.InstanceTypes = nil
	for _, it := range r.InstanceTypes {
		if _, ok := WorstPrice(it, out.Requirements); ok {
			out.InstanceTypes = append(out.InstanceTypes, it)
		}
	}
	return &out
}

// SavingsRatio orders consolidation candidates, highest first: the
// node's price per unit of RescheduleCost, so dear nodes with few, cheap
// pods go first, as the reference's v1.14 sortCandidates
// (pkg/controllers/disruption/consolidation.go). Its older disruption
// cost, weighted by the share of expireAfter left, no longer orders them.
func SavingsRatio(c Candidate) float64 { return c.Price / RescheduleCost(c) }

// RescheduleCost is what moving c's pods costs: 1 for the node itself,
// plus each pod's EvictionCost where positive (the reference's
// computeRescheduleDisruptionCost, pkg/controllers/disruption/types.go).
func RescheduleCost(c Candidate) float64 {
	cost := 1.0
	for _, p := range c.Pods {
		cost += max(0, EvictionCost(p))
	}
	return cost
}

// EvictionCost is 1 for a pod, moved by its
// controller.kubernetes.io/pod-deletion-cost / 2^27 and priority / 2^25,
// the sum clamped to [-10, 10] (the reference's
// pkg/utils/disruption/disruption.go). An unparsable deletion cost counts
// as none.
func EvictionCost(p *corev1.Pod) float64 {
	// A virtual pod is not evicted, only placed again: moving it is free.
	if state.IsVirtual(p) {
		return 0
	}
	cost := 1.0
	if s, ok := p.Annotations[corev1.PodDeletionCost]; ok {
		if n, err := strconv.ParseFloat(s, 64); err == nil {
			cost += n / math.Pow(2, 27)
		}
	}
	if p.Spec.Priority != nil {
		cost += float64(*p.Spec.Priority) / math.Pow(2, 25)
	}
	return clamp(cost, -10, 10)
}

func clamp(v, lo, hi float64) float64 { return max(lo, min(hi, v)) }

// MultiNodeConsolidation deletes two or more nodes at once, possibly
// launching one replacement cheaper than all of them. Examining every
// subset is impractical: it takes the candidates in SavingsRatio order (within each NodePool's Underutilized budget, at most
// MaxMultiNodeCandidates) and binary-searches the longest prefix that
// consolidates, at most ⌈log2(100)⌉ simulations.
type MultiNodeConsolidation struct{ SpotToSpot bool }

// Name implements Method.
func (MultiNodeConsolidation) Name() string { return "MultiNodeConsolidation" }

// Reason implements Method.
func (MultiNodeConsolidation) Reason() v1.DisruptionReason { return v1.DisruptionReasonUnderutilized }

// Compute implements Method.
func (m MultiNodeConsolidation) Compute(env Env) Outcome {
	c := consolidation{spotToSpot: m.SpotToSpot, balance: newBalance(env)}
	out := Outcome{Command: Command{Method: m.Name(), Reason: m.Reason()}}
	var prefix []Candidate
	taken := map[string]int{}
	for _, cand := range c.eligible(m, env, &out) {
		if pool := cand.NodePool.Name; taken[pool] < env.Allowed[pool] && len(prefix) < MaxMultiNodeCandidates {
			taken[pool]++
			prefix = append(prefix, cand)
		}
	}
	// Verdicts are single-node consolidation's to give: it looks at each
	// node on its own.
	out.Verdicts = nil
	// A move a Balanced NodePool's score rejects counts as one that
	// cannot go; the last rejected is reported when none can.
	var rejectedScores []MoveScore
	lo, hi := 2, len(prefix)
	for lo <= hi {
		mid := (lo + hi) / 2
		if replacements, why := c.judge(env, prefix[:mid]); why == "" && notSameType(replacements, prefix[:mid]) {
			scores, taken := c.balance.score(m, prefix[:mid], replacements)
			if taken {
				out.Command.Candidates, out.Command.Replacements, out.Command.Scores = slices.Clone(prefix[:mid]), replacements, scores
				lo = mid + 1
				continue
			}
			rejectedScores = scores
		}
		hi = mid - 1
	}
	out.Scores = out.Command.Scores
	if len(out.Command.Candidates) == 0 {
		out.Scores = rejectedScores
	}
	return out
}

// notSameType narrows a multi-node command's replacement, when it may
// launch as the instance type of one of the candidates, to the types
// cheaper than the cheapest such candidate, and says whether any is left
// (true for a deletion). Merging nodes onto one of their own type is
// deleting the others with more pods moved: single-node consolidation
// deletes the emptier one instead (the reference's
// filterOutSameInstanceType, multinodeconsolidation.go).
func notSameType(replacements []*provisioning.NodeClaim, cs []Candidate) bool {
	if len(replacements) == 0 {
		return true
	}
	r := replacements[0]
	options := map[string]bool{}
	for _, it := range r.InstanceTypes {
		options[it.Name] = true
	}
	limit := math.Inf(1)
	for _, cand := range cs {
		if options[cand.NodeClaim.Labels[v1.LabelInstanceType]] {
			limit = min(limit, cand.Price)
		}
	}
	if math.IsInf(limit, 1) {
		return true
	}
	if cheaper := Cheaper(r, limit); cheaper != nil {
		replacements[0] = cheaper
		return true
	}
	return false
}

// SingleNodeConsolidation deletes one node whose pods fit the others'
// free capacity, or replaces it with one cheaper node: the first, in
// SavingsRatio order, that can go.
type SingleNodeConsolidation struct {
	SpotToSpot bool
	// Workers is how many candidates are judged at once (0: GOMAXPROCS).
	// The outcome is the same for any.
	Workers int
}

// Name implements Method.
func (SingleNodeConsolidation) Name() string { return "SingleNodeConsolidation" }

// Reason implements Method.
func (SingleNodeConsolidation) Reason() v1.DisruptionReason { return v1.DisruptionReasonUnderutilized }

// Compute implements Method. Candidates are judged a few at once, one
// per core, and the verdicts read in order: the outcome is the first
// that can go, as judging them one by one would find, and on a cluster
// where none can (every pass once it is consolidated) the pass takes a
// fraction of the time. Judging only reads the snapshot.
func (m SingleNodeConsolidation) Compute(env Env) Outcome {
	c := consolidation{spotToSpot: m.SpotToSpot, balance: newBalance(env)}
	out := Outcome{Command: Command{Method: m.Name(), Reason: m.Reason()}}
	cands := c.balance.promising(m, c.eligible(m, env, &out), &out)
	type judgement struct {
		replacements []*provisioning.NodeClaim
		why          string
	}
	workers := m.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	batch := make([]judgement, workers)
	for start := 0; start < len(cands); start += len(batch) {
		n := min(len(batch), len(cands)-start)
		var wg sync.WaitGroup
		for i := 1; i < n; i++ {
			wg.Go(func() {
				batch[i].replacements, batch[i].why = c.judge(env, []Candidate{cands[start+i]})
			})
		}
		batch[0].replacements, batch[0].why = c.judge(env, []Candidate{cands[start]})
		wg.Wait()
		for i, j := range batch[:n] {
			cand := cands[start+i]
			if j.why != "" {
				out.Verdicts = append(out.Verdicts, verdict(cand, m, EventUnconsolidatable, VerdictUnconsolidatable, j.why))
				continue
			}
			scores, taken := c.balance.score(m, []Candidate{cand}, j.replacements)
			out.Scores = append(out.Scores, scores...)
			if !taken {
				out.Verdicts = append(out.Verdicts, rejected(cand, scores[0]))
				continue
			}
			out.Command.Candidates, out.Command.Replacements, out.Command.Scores = []Candidate{cand}, j.replacements, scores
			return out
		}
	}
	return out
}

// Consolidating implements Consolidating.
func (MultiNodeConsolidation) Consolidating() {}

// Consolidating implements Consolidating.
func (SingleNodeConsolidation) Consolidating() {}

// Settles implements Settling: consolidation simulates every candidate,
// so it finds nothing new until the cluster changes.
func (MultiNodeConsolidation) Settles() {}

// Settles implements Settling.
func (SingleNodeConsolidation) Settles() {}
