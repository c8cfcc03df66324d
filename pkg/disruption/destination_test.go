package disruption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Consolidation moves no pod onto a node still inside its
// consolidateAfter (the reference's v1.14 consolidation_test.go, "should
// not consolidate pods onto a destination node that is under its
// consolidateAfter window", and the replace path beside it); drift's
// simulation is not held (its SimulateScheduling passes no
// IsConsolidationSimulation).
func TestDestinationsInsideConsolidateAfter(t *testing.T) {
	od := v1.CapacityTypeOnDemand
	now := t0.Add(time.Hour)
	// a, initialized 30s before now, could take b's pod; b has settled
	// for an hour, on the cheapest type: only moving its pod onto a
	// consolidates it. a's own do-not-disrupt keeps it a destination only.
	setup := func(after string) *cluster {
		c := newCluster()
		underutilized(c)
		c.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(after)
		c.launched("a", m5n(4), od, "")
		c.launched("b", m5n(1), od, "")
		c.claim("a").Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-30 * time.Second))
		c.claim("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		c.pod("web-a", "a", requests("1"))
		c.pod("web-b", "b", requests("0.5"))
		return c
	}
	for _, tc := range []struct {
		name    string
		after   string
		now     time.Time
		methods []Method
		want    []string
		replace bool
	}{
		{"held inside a's window", "1m", now, []Method{SingleNodeConsolidation{}}, nil, false},
		{"moved once the window ends", "1m", now.Add(30 * time.Second), []Method{SingleNodeConsolidation{}}, []string{"b"}, false},
		{"consolidateAfter 0s holds nothing", "0s", now, []Method{SingleNodeConsolidation{}}, []string{"b"}, false},
		{"drift moves onto a node inside its window", "1m", now, []Method{Drift{}}, []string{"b"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := setup(tc.after)
			if _, drifting := tc.methods[0].(Drift); drifting {
				c.drift("b", t0)
			}
			c.snapshot(m5...)
			d := Plan(c.in, tc.methods, tc.now)
			if d.Found != (len(tc.want) > 0) {
				t.Fatalf("command %v (%v), want %v", d.Found, names(d.Command.Candidates), tc.want)
			}
			if d.Found && (names(d.Command.Candidates)[0] != tc.want[0] || len(d.Command.Replacements) > 0 != tc.replace) {
				t.Errorf("disrupts %v with %d replacements, want %v", names(d.Command.Candidates), len(d.Command.Replacements), tc.want)
			}
		})
	}
}

// A replacement is a new node: a destination's window does not hold it
// (the reference's "should replace a node with a cheaper one even when
// consolidateAfter has not expired").
func TestReplacementDespiteADestinationInsideConsolidateAfter(t *testing.T) {
	now := t0.Add(time.Hour)
	c := newCluster()
	underutilized(c)
	c.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("1m")
	c.launched("a", m5n(4), v1.CapacityTypeOnDemand, "")
	c.launched("b", m5n(8), v1.CapacityTypeOnDemand, "")
	c.claim("a").Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-30 * time.Second))
	c.pod("web-a", "a", requests("1"))
	c.pod("web-b", "b", requests("1"))
	c.snapshot(m5...)
	d := Plan(c.in, []Method{SingleNodeConsolidation{}}, now)
	if !d.Found || names(d.Command.Candidates)[0] != "b" || len(d.Command.Replacements) != 1 {
		t.Fatalf("command %v on %v with %d replacements, want b replaced", d.Found, names(d.Command.Candidates), len(d.Command.Replacements))
	}
}

// Which nodes are inside their window: initialized ones only, never
// under consolidateAfter Never or 0s (the reference's
// IsUnderConsolidateAfter).
func TestUnderConsolidateAfter(t *testing.T) {
	now := t0.Add(time.Hour)
	for _, tc := range []struct {
		name        string
		after       string
		initialized bool
		want        map[string]bool
	}{
		{"inside the window", "1m", true, map[string]bool{"a": true}},
		{"Never", v1.Never, true, map[string]bool{}},
		{"0s", "0s", true, map[string]bool{}},
		{"not initialized", "1m", false, map[string]bool{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a", "b")
			c.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(tc.after)
			c.claim("a").Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-30 * time.Second))
			if !tc.initialized {
				c.claim("a").Status.Conditions = nil
			}
			if diff := cmp.Diff(tc.want, UnderConsolidateAfter(c.in, now)); diff != "" {
				t.Error(diff)
			}
		})
	}
}
