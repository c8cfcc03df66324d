package provisioning

import (
	"cmp"
	"math"
	"slices"

	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// growthLimit is the most growing c may add to its price for p: what the
// cheapest of c's options that fits p alone (with the daemonsets) costs.
// c's options are all the NodePool could launch for its pods, so this is
// at least what a claim of p's own would cost, and refusing growth above
// it never makes a plan dearer.
func growthLimit(c *claim, p *podData, v *variant) float64 {
	for _, it := range c.options {
		if p.requests.Fits(it.alloc) && it.it.Requirements.Intersects(v.reqs) == nil {
			return it.price
		}
	}
	return math.Inf(1)
}

// candidate is a claim that could take a pod, scored by what taking it
// adds to the claim's price and the room it leaves.
type candidate struct {
	claim *claim
	fit
}

type fit struct {
	cost, room float64
}

func (a fit) compare(b fit) int {
	return cmp.Or(cmp.Compare(a.cost, b.cost), cmp.Compare(a.room, b.room))
}

// growth estimates what growing c to take requests more costs: the
// cheapest of its options with room for both, against its cheapest now.
// Requirements are left to addToClaim; this only orders the tries.
func growth(c *claim, requests scheduling.Resources) (fit, bool) {
	total := c.requests.Add(requests)
	if !total.Fits(c.maxAlloc) {
		return fit{}, false
	}
	// Options are in price order: the first with room is the cheapest.
	for _, it := range c.options {
		if total.Fits(it.alloc) {
			return fit{cost: it.price - c.price, room: leftover(it.alloc, total)}, true
		}
	}
	return fit{}, false
}

// leftover weighs the room a pod leaves in a claim's slack, in cores
// (a GiB of memory weighs half a core, the usual ratio of instance types).
func leftover(slack, requests scheduling.Resources) float64 {
	return float64(slack.CPU-requests.CPU)/1000 + float64(slack.Memory-requests.Memory)/(2<<30)
}

// tryBest offers a pod to candidates, best first (stable: ties keep the
// claims' order), until try takes it. Most pods go to the first they are
// offered to, so the best is found in one pass and the rest are sorted
// only when it refuses. The slice is reordered, not filtered: offering
// it again (grow without thrift) tries the same candidates.
func tryBest(cands []candidate, try func(*claim) bool) bool {
	if len(cands) == 0 {
		return false
	}
	best := 0
	for i := range cands {
		if cands[i].compare(cands[best].fit) < 0 {
			best = i
		}
	}
	b := cands[best]
	copy(cands[1:best+1], cands[:best])
	cands[0] = b
	if try(b.claim) {
		return true
	}
	rest := cands[1:]
	slices.SortStableFunc(rest, func(a, b candidate) int { return a.compare(b.fit) })
	for _, cand := range rest {
		if try(cand.claim) {
			return true
		}
	}
	return false
}
