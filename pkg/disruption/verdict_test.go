package disruption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Each kind of verdict carries its code, so readers never parse the
// message.
func TestVerdictCodes(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*cluster)
		want  VerdictCode
	}{
		{"a do-not-disrupt pod", func(c *cluster) {
			c.drift("a", t0)
			c.pod("web", "a", doNotDisrupt)
		}, VerdictBlocked},
		{"a budget of 0", func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}}
			c.drift("a", t0)
		}, VerdictBudget},
		{"a pod that fits nowhere", func(c *cluster) {
			c.drift("a", t0)
			c.pod("huge", "a", requests("32"))
		}, VerdictUnschedulable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a", "b")
			tc.setup(c)
			c.snapshot(m5...)
			d := Plan(c.in, []Method{Drift{}}, t0.Add(time.Hour))
			var got []VerdictCode
			for _, v := range d.Verdicts {
				got = append(got, v.Code)
			}
			if diff := cmp.Diff([]VerdictCode{tc.want}, got); diff != "" {
				t.Errorf("codes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerdictCodeNeedsInstanceTypes(t *testing.T) {
	for code, want := range map[VerdictCode]bool{
		VerdictBlocked: false, VerdictBudget: false, VerdictReturnWaits: false,
		VerdictUnpriced: true, VerdictUnschedulable: true, VerdictUnconsolidatable: true,
	} {
		if got := code.NeedsInstanceTypes(); got != want {
			t.Errorf("%s needs instance types %v, want %v", code, got, want)
		}
	}
}

// Capabilities are found by interface: the consolidation methods settle,
// the returns back off, and no other method does either.
func TestMethodCapabilities(t *testing.T) {
	var settling, backingOff []string
	for _, m := range Methods(Gates{Drift: true}) {
		if _, ok := m.(Settling); ok {
			settling = append(settling, m.Name())
		}
		if _, ok := m.(BackingOff); ok {
			backingOff = append(backingOff, m.Name())
		}
	}
	if diff := cmp.Diff([]string{"MultiNodeConsolidation", "SingleNodeConsolidation"}, settling); diff != "" {
		t.Errorf("settling methods (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ReturnToPreferred", "ReturnToPreferredTerm"}, backingOff); diff != "" {
		t.Errorf("backing-off methods (-want +got):\n%s", diff)
	}
}
