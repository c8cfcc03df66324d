package simulator_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/simulator"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The expectations below are docs/simulate.md's "What each example
// does", written from the manifests and profiles, not from a run.

func simulate(t *testing.T, example string, mods ...func(*simulator.Options)) *simulator.Result {
	t.Helper()
	root, err := test.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	set, err := manifests.Load([]string{filepath.Join(root, "examples", example)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return run(t, set, mods...)
}

func run(t testing.TB, set *manifests.Set, mods ...func(*simulator.Options)) *simulator.Result {
	t.Helper()
	opts := simulator.DefaultOptions()
	for _, m := range mods {
		m(&opts)
	}
	r, err := simulator.Simulate(context.Background(), set, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, r)
	return r
}

// checkInvariants hold for every run: pods on live nodes only, the
// summary adds up, cost is price × time.
func checkInvariants(t testing.TB, r *simulator.Result) {
	t.Helper()
	live := map[string]bool{}
	atEnd, perHour := 0, 0.0
	for _, n := range r.Nodes {
		if n.DeletedAt == "" {
			live[n.Name] = true
			atEnd++
			perHour += n.PricePerHour
		}
	}
	pending := 0
	for _, p := range r.Pods {
		if p.Node == "" {
			pending++
			if p.PendingReason == "" {
				t.Errorf("pod %s is pending with no reason", p.Name)
			}
		} else if !live[p.Node] {
			t.Errorf("pod %s is on %s, which is not a live node", p.Name, p.Node)
		}
	}
	s := r.Summary
	if s.NodesLaunched != len(r.Nodes) || s.NodesAtEnd != atEnd || s.PodsPending != pending {
		t.Errorf("summary %+v does not match %d nodes, %d at the end, %d pods pending", s, len(r.Nodes), atEnd, pending)
	}
	if s.CostPerHourAtEnd > perHour+1e-9 {
		t.Errorf("cost per hour at the end %.4f is more than the live nodes' %.4f", s.CostPerHourAtEnd, perHour)
	}
}

func at(t *testing.T, offset string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(offset)
	if err != nil {
		t.Fatalf("offset %q: %v", offset, err)
	}
	return d
}

func eventsOf(r *simulator.Result, kind string) []simulator.Event {
	var out []simulator.Event
	for _, e := range r.Events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func nodesWhere(r *simulator.Result, keep func(simulator.Node) bool) []simulator.Node {
	var out []simulator.Node
	for _, n := range r.Nodes {
		if keep(n) {
			out = append(out, n)
		}
	}
	return out
}

func alive(n simulator.Node) bool { return n.DeletedAt == "" }

func running(r *simulator.Result) int {
	n := 0
	for _, p := range r.Pods {
		if p.Node != "" {
			n++
		}
	}
	return n
}

func TestExampleDemo(t *testing.T) {
	r := simulate(t, "demo")
	if running(r) != 12 || r.Summary.PodsPending != 0 {
		t.Errorf("%d pods running, %d pending; want all 12 running", running(r), r.Summary.PodsPending)
	}
	for _, n := range r.Nodes {
		if n.CapacityType != v1.CapacityTypeSpot || len(n.Pods) == 0 {
			t.Errorf("node %+v: want spot (the default cloud has spot everywhere) and not empty", n)
		}
	}
	if f := eventsOf(r, "InsufficientCapacity"); len(f) > 0 {
		t.Errorf("launch failures on a cloud without shortages: %v", f)
	}
}

func TestExampleSpotShortage(t *testing.T) {
	r := simulate(t, "spot-shortage")
	failures := eventsOf(r, "InsufficientCapacity")
	if len(failures) == 0 {
		t.Fatal("no InsufficientCapacity: spot c4.xlarge has no capacity in any zone until 30m")
	}
	for _, zone := range []string{"ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d"} {
		if !strings.Contains(failures[0].Message, "spot/c4.xlarge/"+zone+" (InsufficientInstanceCapacity)") {
			t.Errorf("first failure %q does not name spot c4.xlarge in %s", failures[0].Message, zone)
		}
	}
	for _, n := range r.Nodes {
		launched := at(t, n.LaunchedAt)
		switch {
		case n.InstanceType != "c4.xlarge":
			t.Errorf("node %s is %s; the NodePool allows c4.xlarge only", n.Name, n.InstanceType)
		case launched < 30*time.Minute && n.CapacityType != v1.CapacityTypeOnDemand:
			t.Errorf("node %s launched at %s as %s; before 30m only on-demand has capacity", n.Name, n.LaunchedAt, n.CapacityType)
		case n.CapacityType == v1.CapacityTypeSpot && n.Zone != "ap-northeast-1a":
			t.Errorf("spot node %s in %s; spot capacity returns in ap-northeast-1a only", n.Name, n.Zone)
		}
		if launched < 30*time.Minute && launched > 10*time.Second {
			t.Errorf("node %s launched at %s: the fallback to on-demand should take seconds", n.Name, n.LaunchedAt)
		}
	}
	if spot := nodesWhere(r, func(n simulator.Node) bool { return n.CapacityType == v1.CapacityTypeSpot }); len(spot) == 0 {
		t.Error("no spot node after the scale-up at 35m, with spot back in ap-northeast-1a")
	}
	if running(r) != 8 || r.Summary.PodsPending != 0 {
		t.Errorf("%d pods running, %d pending; want all 8 running", running(r), r.Summary.PodsPending)
	}
}

func TestExampleSpotMaxPrice(t *testing.T) {
	r := simulate(t, "spot-max-price")
	failures := eventsOf(r, "InsufficientCapacity")
	if len(failures) == 0 || strings.Count(failures[0].Message, "(SpotMaxPriceTooLow)") != 3 {
		t.Fatalf("first launch should fail with SpotMaxPriceTooLow in all three zones: %v", failures)
	}
	var spot []simulator.Node
	for _, n := range r.Nodes {
		launched := at(t, n.LaunchedAt)
		if launched < 25*time.Minute && n.CapacityType != v1.CapacityTypeOnDemand {
			t.Errorf("node %s is %s before 25m; spot is above the max price everywhere until 20m", n.Name, n.CapacityType)
		}
		if n.CapacityType == v1.CapacityTypeSpot {
			spot = append(spot, n)
		}
	}
	if len(spot) == 0 {
		t.Fatal("no spot node after the scale-up at 25m, with spot below the max price in ap-northeast-1a")
	}
	for _, n := range spot {
		if n.Zone != "ap-northeast-1a" || n.DeletedAt != "47m0s" || n.DeletionReason != "SpotPriceAboveMax" {
			t.Errorf("spot node %+v: want ap-northeast-1a, deleted at 47m0s (the 45m price rise plus 2m notice) for SpotPriceAboveMax", n)
		}
	}
	if len(nodesWhere(r, func(n simulator.Node) bool { return alive(n) && n.CapacityType != v1.CapacityTypeOnDemand })) > 0 {
		t.Error("a non-on-demand node is alive at the end; spot is above the max price from 45m")
	}
	if running(r) != 8 {
		t.Errorf("%d pods running, want 8", running(r))
	}
}

func TestExampleGCPStyleSpot(t *testing.T) {
	r := simulate(t, "gcp-style-spot")
	zones := func(nodes []simulator.Node) []string {
		var out []string
		for _, n := range nodes {
			out = append(out, n.Zone)
		}
		slices.Sort(out)
		return out
	}
	want := []string{"us-west1-a", "us-west1-b", "us-west1-c"}
	first := nodesWhere(r, func(n simulator.Node) bool { return at(t, n.LaunchedAt) < time.Hour })
	if got := zones(first); !slices.Equal(got, want) {
		t.Errorf("first nodes in zones %v, want one per zone %v", got, want)
	}
	for _, n := range r.Nodes {
		if n.CapacityType != v1.CapacityTypeSpot || n.InstanceType != "m6i.xlarge" || n.PricePerHour != 0.048 {
			t.Errorf("node %+v: want spot m6i.xlarge at the profile's fixed 0.048", n)
		}
	}
	preempted := nodesWhere(r, func(n simulator.Node) bool { return n.DeletedAt != "" })
	if len(preempted) != 1 || preempted[0].Zone != "us-west1-b" || preempted[0].DeletedAt != "1h0m30s" || preempted[0].DeletionReason != "SpotInterruption" {
		t.Errorf("deleted nodes %+v: want the us-west1-b node, 30s after the 1h preemption", preempted)
	}
	if got := zones(nodesWhere(r, alive)); !slices.Equal(got, want) {
		t.Errorf("nodes at the end in zones %v, want one per zone %v", got, want)
	}
	if running(r) != 6 {
		t.Errorf("%d pods running, want 6", running(r))
	}
}

func TestExampleAzureStyleSpot(t *testing.T) {
	r := simulate(t, "azure-style-spot")
	stopped := eventsOf(r, "InstanceStopped")
	if len(stopped) != 2 || stopped[0].At != "30m30s" {
		t.Errorf("stops %v: want both m6i.xlarge VMs deallocated 30s after the 30m eviction", stopped)
	}
	for _, n := range r.Nodes {
		switch {
		case n.NodePool == "azure-spot-deallocate" && n.DeletedAt != "":
			t.Errorf("deallocated node %s was deleted; a stopped VM stays until repaired", n.Name)
		case n.NodePool == "azure-spot-delete" && n.InstanceType == "c6i.xlarge" && n.CapacityType == v1.CapacityTypeSpot && n.DeletedAt == "":
			t.Errorf("spot c6i.xlarge %s alive at the end; from 50m spot is above the class's 0.10 cap", n.Name)
		}
	}
	deleted := nodesWhere(r, func(n simulator.Node) bool { return n.DeletedAt != "" })
	var times []string
	for _, n := range deleted {
		times = append(times, n.DeletedAt+" "+n.DeletionReason)
	}
	if want := []string{"40m30s AzureEviction", "40m30s AzureEviction", "50m30s SpotPriceAboveMax", "50m30s SpotPriceAboveMax"}; !slices.Equal(times, want) {
		t.Errorf("deletions %v, want %v", times, want)
	}
	if f := eventsOf(r, "InsufficientCapacity"); len(f) == 0 || !strings.Contains(f[len(f)-1].Message, "SpotMaxPriceTooLow") {
		t.Errorf("the replacements after 50m should fail spot with SpotMaxPriceTooLow: %v", f)
	}
	if r.Summary.PodsPending != 0 {
		t.Errorf("%d pods pending at the end, want none", r.Summary.PodsPending)
	}
}

func TestExampleCapacityReservations(t *testing.T) {
	r := simulate(t, "capacity-reservations")
	selected := map[string]string{"cr-0a1b2c3d4e5f60701": "m6i.2xlarge/us-west-2a", "cr-0a1b2c3d4e5f60702": "c6i.2xlarge/us-west-2b"}
	inUse := map[string]int{}
	for _, n := range r.Nodes {
		if n.CapacityType != v1.CapacityTypeReserved {
			if n.NodePool == "cr-reserved-only" || (n.NodePool == "cr-reserved-on-demand" && n.CapacityType != v1.CapacityTypeOnDemand) {
				t.Errorf("node %+v is outside what its NodePool allows", n)
			}
			continue
		}
		if selected[n.ReservationID] != n.InstanceType+"/"+n.Zone {
			t.Errorf("reserved node %+v is not in a reservation the SimNodeClass selects, with its type and zone", n)
		}
		if alive(n) {
			inUse[n.ReservationID]++
		}
	}
	for id, n := range inUse {
		if n > 2 {
			t.Errorf("%d nodes in %s, which has 2 slots", n, id)
		}
	}
	for _, p := range r.Pods {
		if p.Node == "" && !strings.HasPrefix(p.PendingReason, "ReservationExhausted") {
			t.Errorf("pod %s pending for %q; only reserved-only pods may wait, for ReservationExhausted", p.Name, p.PendingReason)
		}
	}
	if got := running(r) + r.Summary.PodsPending; got != 12 {
		t.Errorf("%d pods, want 12", got)
	}
}

func TestExampleGPUFlavors(t *testing.T) {
	r := simulate(t, "gpu-flavors")
	first := nodesWhere(r, func(n simulator.Node) bool { return at(t, n.LaunchedAt) < 30*time.Minute })
	if len(first) != 2 {
		t.Fatalf("%d nodes before 30m, want 2: each replica needs one GPU", len(first))
	}
	for _, n := range r.Nodes {
		if n.InstanceType != "g5.xlarge" || n.CapacityType != v1.CapacityTypeSpot || len(n.Pods) != 1 {
			t.Errorf("node %+v: want spot g5.xlarge (a10g, the annotation's first flavor) with one pod", n)
		}
		if at(t, n.LaunchedAt) < 30*time.Minute && (n.DeletedAt != "32m0s" || n.DeletionReason != "SpotInterruption") {
			t.Errorf("node %+v: want it interrupted at 30m and gone at 32m", n)
		}
	}
	if len(nodesWhere(r, alive)) != 2 || running(r) != 2 {
		t.Errorf("want 2 a10g nodes serving 2 pods at the end")
	}
}

func TestExampleGCPPreemptibleLifetime(t *testing.T) {
	r := simulate(t, "gcp-style-spot", func(o *simulator.Options) { o.Duration = 25 * time.Hour })
	notices := eventsOf(r, "PreemptibleMaxLifetime")
	if len(notices) != 2 {
		t.Fatalf("%d lifetime notices, want the two nodes launched at the start (the third was preempted at 1h)", len(notices))
	}
	for _, n := range r.Nodes {
		if at(t, n.LaunchedAt) > time.Minute || n.Zone == "us-west1-b" {
			continue
		}
		ended := at(t, n.DeletedAt)
		if n.DeletionReason != "PreemptibleMaxLifetime" || ended < 24*time.Hour || ended > 24*time.Hour+time.Minute {
			t.Errorf("node %+v: want it ended at its 24-hour limit", n)
		}
	}
	for _, e := range notices {
		if d := at(t, e.At); d < 24*time.Hour-time.Minute || d > 24*time.Hour {
			t.Errorf("notice at %s, want 30s before the limit", e.At)
		}
	}
}

// costAt is the cost per hour of the last sample at or before offset.
func costAt(t *testing.T, r *simulator.Result, offset time.Duration) float64 {
	t.Helper()
	cost := 0.0
	for _, s := range r.Samples {
		if at(t, s.At) > offset {
			break
		}
		cost = s.CostPerHour
	}
	return cost
}

func TestExampleConsolidation(t *testing.T) {
	r := simulate(t, "consolidation", func(o *simulator.Options) { o.Duration = 24 * time.Hour })
	for _, tc := range []struct {
		at   time.Duration
		cost float64
	}{{7 * time.Hour, 2.3040}, {8*time.Hour + 7*time.Minute, 0.3840}, {24 * time.Hour, 2.1120}} {
		if got := costAt(t, r, tc.at); math.Abs(got-tc.cost) > 1e-6 {
			t.Errorf("cost per hour at %s = %.4f, want %.4f (README)", tc.at, got, tc.cost)
		}
	}
	reasons := map[string]int{}
	for _, n := range r.Nodes {
		if n.DeletedAt != "" {
			reasons[n.DeletionReason]++
			if d := at(t, n.DeletedAt); d < 8*time.Hour+5*time.Minute || d > 8*time.Hour+7*time.Minute {
				t.Errorf("node %s deleted at %s; want between 08:05 and 08:07", n.Name, n.DeletedAt)
			}
		}
	}
	if reasons["Empty"] != 2 || reasons["Underutilized"] != 1 || len(reasons) != 2 {
		t.Errorf("deletions by reason %v, want two Empty and one Underutilized", reasons)
	}
	if r.Summary.PodsPending != 0 || running(r) != 40 {
		t.Errorf("%d pods running, %d pending; want all 40 running", running(r), r.Summary.PodsPending)
	}
}
