package provisioning

import (
	"math/bits"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// claimSet is a set of planned claims by index, 64 to a word.
type claimSet []uint64

func (b *claimSet) add(i int) {
	for len(*b) <= i/64 {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

// word is the word holding claims w·64 to w·64+63.
func (b claimSet) word(w int) uint64 {
	if w < len(b) {
		return b[w]
	}
	return 0
}

// excluded gathers the sets of claims the pod's topology rules out
// whatever the rest of the cluster holds: those already holding a pod a
// hostname anti-affinity term, or a hostname spread with no skew to
// spare, keeps it away from. A pod with anti-affinity to its own kind
// (one per node) would otherwise read every claim, each holding one, to
// find none will do. admitFixed still decides; this only skips.
func (s *solver) excluded(p *podData, v *variant, mins []int32) []claimSet {
	s.exclusions = s.exclusions[:0]
	for i, con := range v.constraints {
		// Anti-affinity and spreads allow fewer the more a domain holds,
		// so a claim of one is ruled out only if every occupied one is.
		if con.counter.key == corev1.LabelHostname && !con.allowsCount(1, mins[i]) {
			s.exclusions = append(s.exclusions, con.counter.claims)
		}
	}
	for _, inv := range p.inverse {
		if inv.key == corev1.LabelHostname {
			s.exclusions = append(s.exclusions, inv.claims)
		}
	}
	return s.exclusions
}

// eachOpen calls visit, in order, for the claims in [lo, hi) no set in
// excl holds. lo is a multiple of 64.
func eachOpen(lo, hi int, excl []claimSet, visit func(i int)) {
	if len(excl) == 0 {
		for i := lo; i < hi; i++ {
			visit(i)
		}
		return
	}
	for w := lo / 64; w*64 < hi; w++ {
		open := ^uint64(0)
		for _, b := range excl {
			open &^= b.word(w)
		}
		for open != 0 {
			i := w*64 + bits.TrailingZeros64(open)
			if i >= hi {
				break
			}
			visit(i)
			open &= open - 1
		}
	}
}

// parallelClaims is how many planned claims a pass over them needs before
// it is split among workers: below it, handing the chunks over costs
// more than it saves.
const parallelClaims = 512

// collect runs pass over every planned claim and returns, after dst, the
// candidates it found in claim order. With several workers the claims
// are cut into chunks scored at once, each into its own buffer, and
// joined in chunk order: the result does not depend on how many workers
// there are or which finishes first. pass only reads the solve's state.
func (s *solver) collect(dst []candidate, pass func(dst []candidate, lo, hi int) []candidate) []candidate {
	n := len(s.claims)
	if s.workers < 2 || n < parallelClaims {
		return pass(dst, 0, n)
	}
	// Chunks start on a word of the exclusion sets.
	size := ((n+s.workers-1)/s.workers + 63) &^ 63
	for len(s.chunks) < s.workers {
		s.chunks = append(s.chunks, nil)
	}
	var wg sync.WaitGroup
	for k := 1; k < s.workers; k++ {
		lo, hi := min(k*size, n), min((k+1)*size, n)
		wg.Go(func() { s.chunks[k] = pass(s.chunks[k][:0], lo, hi) })
	}
	dst = pass(dst, 0, min(size, n))
	wg.Wait()
	for k := 1; k < s.workers; k++ {
		dst = append(dst, s.chunks[k]...)
	}
	return dst
}
