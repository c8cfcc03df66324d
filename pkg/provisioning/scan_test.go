package provisioning

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEachOpen(t *testing.T) {
	set := func(idx ...int) claimSet {
		var b claimSet
		for _, i := range idx {
			b.add(i)
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		lo, hi int
		excl   []claimSet
		want   []int
	}{
		{"no exclusions", 0, 5, nil, []int{0, 1, 2, 3, 4}},
		{"empty range", 64, 64, []claimSet{set(1)}, nil},
		{"one set", 0, 6, []claimSet{set(1, 4)}, []int{0, 2, 3, 5}},
		{"sets unite", 0, 6, []claimSet{set(1), set(4, 5)}, []int{0, 2, 3}},
		{"a set shorter than the range excludes nothing past its end", 0, 130, []claimSet{set(0)}, seq(1, 130)},
		{"a full word is skipped", 0, 70, []claimSet{set(seq(0, 64)...)}, seq(64, 70)},
		{"from a later word, up to hi", 64, 131, []claimSet{set(64, 128)}, seq(65, 128, 129, 130)},
		{"everything excluded", 0, 3, []claimSet{set(0, 1, 2)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			eachOpen(tc.lo, tc.hi, tc.excl, func(i int) { got = append(got, i) })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("visited (-want +got):\n%s", diff)
			}
		})
	}
}

// seq is lo to hi-1, then extra.
func seq(lo, hi int, extra ...int) []int {
	var out []int
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return append(out, extra...)
}

func TestCollectJoinsChunksInClaimOrder(t *testing.T) {
	for _, tc := range []struct{ claims, workers int }{
		{0, 4}, {10, 4}, {parallelClaims - 1, 2}, {parallelClaims, 2}, {parallelClaims + 1, 2}, {parallelClaims + 65, 3}, {3 * parallelClaims, 8},
	} {
		s := &solver{workers: tc.workers}
		var want []int
		for i := range tc.claims {
			s.claims = append(s.claims, &claim{index: i})
			if i%3 != 1 {
				want = append(want, i)
			}
		}
		got := s.collect(nil, func(dst []candidate, lo, hi int) []candidate {
			for i := lo; i < hi; i++ {
				if i%3 != 1 {
					dst = append(dst, candidate{claim: s.claims[i]})
				}
			}
			return dst
		})
		var order []int
		for _, c := range got {
			order = append(order, c.claim.index)
		}
		if diff := cmp.Diff(want, order); diff != "" {
			t.Errorf("%d claims, %d workers: candidates (-want +got):\n%s", tc.claims, tc.workers, diff)
		}
	}
}
