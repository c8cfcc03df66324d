package provisioning

import (
	"math/bits"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// claimSet is a set of planned claims by index, 64 to a word.
type claimSet []uint64

func (b *claimSet) add(i int) {
	for len(*b) <= i/64 {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

func (b claimSet) remove(i int) {
	if i/64 < len(b) {
		b[i/64] &^= 1 << (i % 64)
	}
}

// word is the word holding claims w·64 to w·64+63.
func (b claimSet) word(w int) uint64 {
	if w < len(b) {
		return b[w]
	}
	return 0
}

// excluded gathers the sets of claims the pod's topology rules out as
// admitFixed would: those holding a pod a hostname anti-affinity term or
// a hostname spread with no skew to spare keeps it away from, and those
// fixed to a domain one of its constraints or another pod's anti-affinity
// rules out. A pod with anti-affinity to its own kind (one per node)
// would otherwise read every claim, each holding one, to find none will
// do. exact: the sets decide the topology on every claim, and admitFixed
// need not be asked (it is for what they cannot say: a hostname spread
// that allows some pods, a hostname affinity).
func (s *solver) excluded(p *podData, v *variant, mins []int32) (excl []claimSet, exact bool) {
	s.exclusions, exact = s.exclusions[:0], true
	for i, con := range v.constraints {
		if con.counter.key != corev1.LabelHostname {
			for _, d := range s.fixedAt[con.counter.key] {
				if !con.allows(d.value, mins[i]) {
					s.exclusions = append(s.exclusions, d.claims)
				}
			}
			continue
		}
		// Anti-affinity and spreads allow fewer the more a claim holds,
		// so a claim of one is ruled out only if every occupied one is.
		if !con.allowsCount(1, mins[i]) {
			s.exclusions = append(s.exclusions, con.counter.claims)
		}
		exact = exact && con.allowsCount(0, mins[i]) && !con.allowsCount(1, mins[i])
	}
	for _, inv := range p.inverse {
		if inv.key == corev1.LabelHostname {
			s.exclusions = append(s.exclusions, inv.claims)
			continue
		}
		for _, d := range s.fixedAt[inv.key] {
			if inv.counts[d.value] > 0 {
				s.exclusions = append(s.exclusions, d.claims)
			}
		}
	}
	return s.exclusions, exact
}

// domainClaims are the planned claims whose requirements fix a key to
// value.
type domainClaims struct {
	value  string
	claims claimSet
}

// indexFixed notes the claim under the domains its requirements fix:
// requirements only narrow, so a claim never leaves a domain.
func (s *solver) indexFixed(c *claim) {
	for _, f := range c.fixed {
		if f.key == corev1.LabelHostname {
			continue
		}
		list := s.fixedAt[f.key]
		j := slices.IndexFunc(list, func(d domainClaims) bool { return d.value == f.value })
		if j < 0 {
			list, j = append(list, domainClaims{value: f.value}), len(list)
			s.fixedAt[f.key] = list
		}
		list[j].claims.add(c.index)
	}
}

// roomLevels is how many powers of two roomIndex tells slack apart by:
// up to 2^23 millicores of CPU and 2^23 MiB of memory.
const roomLevels = 24

// roomIndex sets claims apart by their slack, to the power of two:
// cpu[k] holds the claims with less than 2^k millicores of CPU slack,
// memory[k] those with less than 2^k MiB. Most claims are nearly full
// and a pod with a free slot anywhere is rare among them, so the slack
// pass skips, 64 at a time, claims with less than half what it asks.
type roomIndex struct {
	cpu, memory [roomLevels]claimSet
}

// level is the largest k with 2^k ≤ amount, -1 for none, at most
// roomLevels-1.
func level(amount int64) int {
	if amount <= 0 {
		return -1
	}
	return min(bits.Len64(uint64(amount))-1, roomLevels-1)
}

// set moves claim i from the levels of old (a new claim: nil) to those of
// r.
func (x *roomIndex) set(i int, old *room, r room) {
	from := [2]int{roomLevels - 1, roomLevels - 1}
	if old != nil {
		from = [2]int{level(old.cpu), level(old.memory >> 20)}
	}
	to := [2]int{level(r.cpu), level(r.memory >> 20)}
	for d, sets := range [2]*[roomLevels]claimSet{&x.cpu, &x.memory} {
		for k := to[d] + 1; k <= from[d]; k++ {
			sets[k].add(i)
		}
		for k := from[d] + 1; k <= to[d]; k++ {
			sets[k].remove(i)
		}
	}
}

// tight appends the sets of claims with too little slack for requests,
// known without reading them.
func (x *roomIndex) tight(dst []claimSet, requests scheduling.Resources) []claimSet {
	if k := level(requests.CPU); k >= 0 {
		dst = append(dst, x.cpu[k])
	}
	if k := level(requests.Memory >> 20); k >= 0 {
		dst = append(dst, x.memory[k])
	}
	return dst
}

// eachOpen calls visit, in order, for the claims in [0, n) no set in
// excl holds.
func eachOpen(n int, excl []claimSet, visit func(i int)) {
	if len(excl) == 0 {
		for i := range n {
			visit(i)
		}
		return
	}
	for w := 0; w*64 < n; w++ {
		open := ^uint64(0)
		for _, b := range excl {
			open &^= b.word(w)
		}
		for open != 0 {
			i := w*64 + bits.TrailingZeros64(open)
			if i >= n {
				break
			}
			visit(i)
			open &= open - 1
		}
	}
}

// parallelPods is how many pods a solve needs before it works out what
// their specs alone decide on several goroutines: a goroutine costs more
// than a few pods' worth.
const parallelPods = 1024

// inChunks calls do on [0, n) cut into one chunk per worker, at once, and
// returns when all are done. Each chunk writes only its own indices, so
// the result does not depend on the number of workers or their order.
func inChunks(n, workers int, do func(lo, hi int)) {
	if workers < 2 || n < parallelPods {
		do(0, n)
		return
	}
	size := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := size; lo < n; lo += size {
		wg.Go(func() { do(lo, min(lo+size, n)) })
	}
	do(0, min(size, n))
	wg.Wait()
}
