package disruption

import (
	"testing"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
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
	key := settledKey(base().in, Candidates(base().in, t0), Methods(DefaultGates()), t0)
	if again := settledKey(base().in, Candidates(base().in, t0), Methods(DefaultGates()), t0); again != key {
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
		if got := settledKey(c.in, Candidates(c.in, t0), Methods(DefaultGates()), tc.now); got == key {
			t.Errorf("%s: the key did not change", tc.name)
		}
	}
}

// A round that decided nothing may decide otherwise when the first
// unavailable mark in force ends, an offering's or a capacity type's.
func TestUnsettles(t *testing.T) {
	key := cloudprovider.OfferingKey{InstanceType: "m5.large", Zone: "us-west-2a", CapacityType: v1.CapacityTypeSpot}
	for _, tc := range []struct {
		name string
		h    cloudprovider.UnavailableHistory
		want time.Time
	}{
		{"no marks", cloudprovider.UnavailableHistory{}, time.Time{}},
		{"marks ended", cloudprovider.UnavailableHistory{Offerings: map[cloudprovider.OfferingKey]time.Time{key: t0.Add(-time.Minute)}}, time.Time{}},
		{"the earliest in force", cloudprovider.UnavailableHistory{
			Offerings:     map[cloudprovider.OfferingKey]time.Time{key: t0.Add(3 * time.Minute)},
			CapacityTypes: map[string]time.Time{v1.CapacityTypeSpot: t0.Add(2 * time.Minute), v1.CapacityTypeOnDemand: t0.Add(-time.Second)},
		}, t0.Add(2 * time.Minute)},
	} {
		if got := Unsettles(tc.h, t0); !got.Equal(tc.want) {
			t.Errorf("%s: Unsettles = %s, want %s", tc.name, got, tc.want)
		}
	}
}
