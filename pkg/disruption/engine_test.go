package disruption

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

func planned(t *testing.T, e *Engine, c *cluster, now time.Time) *Decision {
	t.Helper()
	tick, err := e.Tick(c.in, nil, now)
	if err != nil || tick.Planned == nil {
		t.Fatalf("tick %+v %v, want a planning round", tick, err)
	}
	return tick.Planned
}

// A pass in which consolidation finds nothing settles the cluster: the
// next pass over the same cluster skips consolidation's simulations,
// and any change (a pod arriving) brings them back.
func TestEngineSkipsConsolidationWhileSettled(t *testing.T) {
	c := newCluster("a", "b")
	c.pool().Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
	c.pod("x", "a")
	c.pod("y", "b")
	e := &Engine{Options: Options{Methods: Methods(Gates{})}, EventInterval: DefaultEventInterval}
	ran := func(d *Decision) []string {
		var out []string
		for m := range d.Eligible {
			out = append(out, m)
		}
		slices.Sort(out)
		return out
	}
	all := []string{"Emptiness", "ExpectedInterruption", "MultiNodeConsolidation", "ReturnToPreferred", "ReturnToPreferredTerm", "SingleNodeConsolidation"}
	if d := planned(t, e, c, t0); d.Found || !cmp.Equal(ran(d), all) {
		t.Fatalf("first pass found %v, ran %v; want nothing found by %v", d.Command.Names(), ran(d), all)
	}
	if d := planned(t, e, c, t0.Add(time.Second)); !cmp.Equal(ran(d), []string{"Emptiness", "ExpectedInterruption", "ReturnToPreferred", "ReturnToPreferredTerm"}) {
		t.Errorf("settled pass ran %v, want only Emptiness, ExpectedInterruption and the returns", ran(d))
	}
	c.pod("z", "a")
	if d := planned(t, e, c, t0.Add(2*time.Second)); !cmp.Equal(ran(d), all) {
		t.Errorf("after a change the pass ran %v, want %v", ran(d), all)
	}
}

// A tick that found nothing wakes when an unavailable mark ends, as the
// controller's poll would plan then: the offering is back.
func TestEngineWakesWhenAMarkEnds(t *testing.T) {
	c := newCluster("a", "b")
	c.pod("x", "a")
	c.pod("y", "b")
	c.in.Unavailable = cloudprovider.UnavailableHistory{CapacityTypes: map[string]time.Time{v1.CapacityTypeSpot: t0.Add(3 * time.Minute)}}
	e := &Engine{Options: Options{Methods: Methods(Gates{})}, EventInterval: DefaultEventInterval}
	tick, err := e.Tick(c.in, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if tick.Planned == nil || tick.Planned.Found || !tick.WakeAt.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("tick found %t, wakes at %s; want nothing found and a wake at the mark's end %s", tick.Planned != nil && tick.Planned.Found, tick.WakeAt, t0.Add(3*time.Minute))
	}
}

// The same verdict for the same node is reported once per interval.
func TestEngineRateLimitsVerdicts(t *testing.T) {
	c := newCluster("a")
	c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}}
	e := &Engine{Options: Options{Methods: Methods(Gates{})}, EventInterval: 5 * time.Minute}
	count := func(now time.Time) int {
		tick, err := e.Tick(c.in, nil, now)
		if err != nil {
			t.Fatal(err)
		}
		return len(tick.Verdicts)
	}
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{0, 1}, {time.Minute, 0}, {4 * time.Minute, 0}, {5 * time.Minute, 1}} {
		if got := count(t0.Add(tc.at)); got != tc.want {
			t.Errorf("verdicts at +%s: %d, want %d", tc.at, got, tc.want)
		}
	}
}

// A decided command is in flight until its step finishes: no planning
// meanwhile, and its replacements are the ones to observe.
func TestEngineOneCommandAtATime(t *testing.T) {
	c := newCluster("a", "b")
	e := &Engine{Options: Options{Methods: Methods(Gates{}), ValidationDelay: 10 * time.Second}, EventInterval: DefaultEventInterval}
	tick, err := e.Tick(c.in, nil, t0)
	if err != nil || tick.Started == nil || tick.WakeAt != t0.Add(10*time.Second) {
		t.Fatalf("tick %+v %v, want a command started, waking after the validation delay", tick, err)
	}
	if tick, _ = e.Tick(c.in, nil, t0.Add(time.Second)); tick.Planned != nil || len(tick.Actions) != 0 {
		t.Errorf("tick while validating %+v, want no planning and no actions", tick)
	}
	tick, _ = e.Tick(c.in, nil, t0.Add(10*time.Second))
	if tick.Finished == nil || tick.Abandoned != "" || len(tick.Actions) != 2 {
		t.Errorf("tick after the delay %+v, want the empty nodes tainted and deleted", tick)
	}
	if _, active := e.Active(); active {
		t.Error("a finished command is still active")
	}
}
