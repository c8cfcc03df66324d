package provisioning

import (
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/pkg/scheduling"
)

func setOf(idx ...int) claimSet {
	var b claimSet
	for _, i := range idx {
		b.add(i)
	}
	return b
}

// seq is lo to hi-1, then extra.
func seq(lo, hi int, extra ...int) []int {
	var out []int
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return append(out, extra...)
}

func TestEachOpen(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		excl []claimSet
		want []int
	}{
		{"no exclusions", 5, nil, []int{0, 1, 2, 3, 4}},
		{"no claims", 0, []claimSet{setOf(1)}, nil},
		{"one set", 6, []claimSet{setOf(1, 4)}, []int{0, 2, 3, 5}},
		{"sets unite", 6, []claimSet{setOf(1), setOf(4, 5)}, []int{0, 2, 3}},
		{"a set shorter than the claims excludes nothing past its end", 130, []claimSet{setOf(0)}, seq(1, 130)},
		{"a full word is skipped", 70, []claimSet{setOf(seq(0, 64)...)}, seq(64, 70)},
		{"up to n, across words", 131, []claimSet{setOf(seq(0, 65)...), setOf(128)}, seq(65, 128, 129, 130)},
		{"everything excluded", 3, []claimSet{setOf(0, 1, 2)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			eachOpen(tc.n, tc.excl, func(i int) { got = append(got, i) })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("visited (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaimSetRemove(t *testing.T) {
	b := setOf(3, 70)
	b.remove(3)
	b.remove(500) // past the end: nothing to do
	var got []int
	eachOpen(200, []claimSet{complement(b, 200)}, func(i int) { got = append(got, i) })
	if diff := cmp.Diff([]int{70}, got); diff != "" {
		t.Errorf("left in the set (-want +got):\n%s", diff)
	}
}

// complement is every claim of [0, n) b does not hold.
func complement(b claimSet, n int) claimSet {
	var out claimSet
	for i := range n {
		if b.word(i/64)&(1<<(i%64)) == 0 {
			out.add(i)
		}
	}
	return out
}

func TestInChunksCoversEveryIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{
		{0, 4}, {10, 4}, {parallelPods - 1, 2}, {parallelPods, 2}, {parallelPods + 1, 2}, {parallelPods + 65, 3}, {3 * parallelPods, 8}, {parallelPods, 1},
	} {
		var mu sync.Mutex
		seen := make([]int, tc.n)
		inChunks(tc.n, tc.workers, func(lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, n := range seen {
			if n != 1 {
				t.Errorf("%d items, %d workers: item %d done %d times", tc.n, tc.workers, i, n)
			}
		}
	}
}

// The room index must only ever rule out claims without room: a claim is
// tight for requests exactly when the power of two below them exceeds
// its slack.
func TestRoomIndexRulesOutOnlyClaimsWithoutRoom(t *testing.T) {
	const gib = 1 << 30
	slacks := []room{
		{cpu: 0, memory: 0},
		{cpu: 100, memory: 100 << 20},
		{cpu: 999, memory: 3 * gib},
		{cpu: 1000, memory: 4 * gib},
		{cpu: 4000, memory: 512 << 20},
		{cpu: 64000, memory: 256 * gib},
	}
	var x roomIndex
	for i, r := range slacks {
		x.set(i, nil, r)
	}
	// Slack moves both ways: a claim fills, another grows.
	old := slacks[1]
	slacks[1] = room{cpu: 3000, memory: 8 * gib}
	x.set(1, &old, slacks[1])
	old = slacks[5]
	slacks[5] = room{cpu: 50, memory: 10 << 20}
	x.set(5, &old, slacks[5])
	for _, req := range []scheduling.Resources{
		{}, {CPU: 100, Memory: 100 << 20}, {CPU: 1000, Memory: 1 * gib}, {CPU: 1500, Memory: 4 * gib}, {CPU: 64000}, {Memory: 1},
	} {
		var open []int
		eachOpen(len(slacks), x.tight(nil, req), func(i int) { open = append(open, i) })
		for i, r := range slacks {
			fits := req.CPU <= r.cpu && req.Memory <= r.memory
			kept := slices.Contains(open, i)
			if fits && !kept {
				t.Errorf("requests %+v: claim %d with slack %+v has room but was ruled out", req, i, r)
			}
			// What is kept has more than half the room asked (memory is
			// told apart from a MiB up).
			if kept && (2*r.cpu < req.CPU || req.Memory >= 1<<20 && 2*r.memory < req.Memory) {
				t.Errorf("requests %+v: claim %d with slack %+v was kept", req, i, r)
			}
		}
	}
}
