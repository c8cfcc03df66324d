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
			return fit{cost: it.price - c.price, room: leftover(room{cpu: it.alloc.CPU, memory: it.alloc.Memory}, total)}, true
		}
	}
	return fit{}, false
}

// grown is growth(claim, requests) for a pod shape at a claim version.
type grown struct {
	shape, version int32
	ok             bool
	fit            fit
}

// growthOf is whether claim i has no slack for p and what growing it
// for p would cost. A pod's search prices every claim it could grow;
// pods come largest first, so runs of one shape ask the same of claims
// that have not changed since, and the answer is kept by claim until the
// claim changes or another shape asks. Claims on other goroutines are
// others' indices, so collect's passes never write the same entry.
func (s *solver) growthOf(i int, p *podData) (fit, bool) {
	r, m := s.rooms[i], &s.grown[i]
	if m.shape == p.shape && m.version == r.version {
		return m.fit, m.ok
	}
	c := s.claims[i]
	m.shape, m.version, m.ok = p.shape, r.version, false
	if !p.requests.Fits(c.slack) {
		m.fit, m.ok = growth(c, p.requests)
	}
	return m.fit, m.ok
}

// leftover weighs the room a pod leaves in a claim's slack, in cores
// (a GiB of memory weighs half a core, the usual ratio of instance types).
func leftover(slack room, requests scheduling.Resources) float64 {
	return weight(slack.cpu-requests.CPU, slack.memory-requests.Memory)
}

// weight is an amount of CPU (millicores) and memory (bytes) in cores.
func weight(cpu, memory int64) float64 {
	return float64(cpu)/1000 + float64(memory)/(2<<30)
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
