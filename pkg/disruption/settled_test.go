package disruption

import (
	"testing"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// The key changes with whatever consolidation's decision depends on, and
// only then.
func TestSettledKey(t *testing.T) {
	base := func() *cluster {
		c := newCluster("a", "b")
		c.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("10m")
		c.pod("x", "a")
		return c
	}
	key := settledKey(base().in, t0)
	if again := settledKey(base().in, t0); again != key {
		t.Fatalf("the same cluster has two keys: %s and %s", key, again)
	}
	for _, tc := range []struct {
		name   string
		change func(*cluster)
		now    time.Time
	}{
		{"a pod arrives", func(c *cluster) { c.pod("y", "b") }, t0},
		{"a pod is pending", func(c *cluster) { c.pendingPod("p"); c.snapshot() }, t0},
		{"a node is blocked", func(c *cluster) { c.pdb("web", 0) }, t0},
		{"the budget changes", func(c *cluster) { c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}} }, t0},
		{"the policy changes", func(c *cluster) { c.pool().Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmpty }, t0},
		{"a node becomes consolidatable", func(*cluster) {}, t0.Add(10 * time.Minute)},
	} {
		c := base()
		tc.change(c)
		if got := settledKey(c.in, tc.now); got == key {
			t.Errorf("%s: the key did not change", tc.name)
		}
	}
}
