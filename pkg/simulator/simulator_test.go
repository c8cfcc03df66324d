package simulator_test

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/simulator"
)

func TestTheSameSeedGivesTheSameRun(t *testing.T) {
	encode := func(seed uint64) string {
		r := simulate(t, "azure-style-spot", func(o *simulator.Options) { o.Seed = seed })
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	first := encode(7)
	if diff := cmp.Diff(first, encode(7)); diff != "" {
		t.Errorf("two runs with seed 7 differ:\n%s", diff)
	}
	if first == encode(8) {
		t.Error("seeds 7 and 8 gave identical runs; names should come from the seed")
	}
}

// TestJSONContract pins the keys docs/simulate.md documents: removing
// or renaming one breaks users' scripts.
func TestJSONContract(t *testing.T) {
	r := simulate(t, "spot-shortage")
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	keysOf := func(v any) []string {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%v is not an object", v)
		}
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	first := func(key string) any {
		list, ok := doc[key].([]any)
		if !ok || len(list) == 0 {
			t.Fatalf("%s is not a non-empty list", key)
		}
		return list[0]
	}
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"document", keysOf(doc), []string{"events", "nodes", "pods", "samples", "summary"}},
		{"node", keysOf(first("nodes")), []string{"capacityType", "deletedAt", "deletionReason", "disruptedAt", "instanceType", "launchedAt", "name", "nodeClaim", "nodePool", "pods", "pricePerHour", "reservationID", "zone"}},
		{"pod", keysOf(first("pods")), []string{"name", "node", "pendingReason"}},
		{"event", keysOf(first("events")), []string{"at", "kind", "message", "object"}},
		{"summary", keysOf(doc["summary"]), []string{"byCapacityType", "costPerHourAtEnd", "duration", "nodesAtEnd", "nodesLaunched", "podsPending", "totalCost"}},
		{"byCapacityType", keysOf(doc["summary"].(map[string]any)["byCapacityType"]), []string{"on-demand", "reserved", "spot"}},
		{"sample", keysOf(first("samples")), []string{"at", "costPerHour", "nodes", "podsPending", "seconds"}},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s keys (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestTotalCostIsPriceTimesTime: every node is billed from launch to
// deletion or the end, and the samples agree with the nodes.
func TestTotalCostIsPriceTimesTime(t *testing.T) {
	r := simulate(t, "spot-max-price")
	end := 2 * time.Hour
	var total float64
	for _, n := range r.Nodes {
		until := end
		if n.DeletedAt != "" {
			until = at(t, n.DeletedAt)
		}
		total += n.PricePerHour * (until - at(t, n.LaunchedAt)).Hours()
	}
	if math.Abs(total-r.Summary.TotalCost) > 1e-9 {
		t.Errorf("total cost %.6f, want %.6f from the nodes' prices and lifetimes", r.Summary.TotalCost, total)
	}
	last := r.Samples[len(r.Samples)-1]
	if last.At != "2h0m0s" || math.Abs(last.CostPerHour-r.Summary.CostPerHourAtEnd) > 1e-9 {
		t.Errorf("last sample %+v does not match the summary %+v", last, r.Summary)
	}
	for i := 1; i < len(r.Samples); i++ {
		if r.Samples[i].Seconds <= r.Samples[i-1].Seconds {
			t.Errorf("samples %d and %d are not in time order", i-1, i)
		}
	}
}

func read(t testing.TB, manifest string) *manifests.Set {
	t.Helper()
	set := &manifests.Set{}
	if err := manifests.Read("test.yaml", []byte(manifest), set); err != nil {
		t.Fatal(err)
	}
	return set
}

func TestScaleEventMustNameADeployment(t *testing.T) {
	set := read(t, `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: scale}
spec:
  events:
  - {at: 1m, type: Scale, workload: default/missing, replicas: 3}
`)
	_, err := simulator.New(set, set.CloudProfiles[0].Profile, nil, simulator.DefaultOptions())
	if err == nil || !strings.Contains(err.Error(), "spec.events[0].workload") || !strings.Contains(err.Error(), "default/missing") {
		t.Errorf("error %v, want one naming spec.events[0].workload and default/missing", err)
	}
}

func TestInterruptedPodsFindNewNodes(t *testing.T) {
	r := run(t, spreadDeployment(t, 1000))
	if running(r) != 1000 {
		t.Errorf("%d pods running at the end, want 1000", running(r))
	}
	if len(eventsOf(r, "SpotInterruption")) == 0 || len(nodesWhere(r, func(n simulator.Node) bool { return n.DeletionReason == "Interrupted" })) == 0 {
		t.Error("no node was interrupted")
	}
	// Spot nodes that fell back to on-demand return to spot, one at a
	// time: a return may be under way at the end, its replacement not
	// yet running the pods.
	returning := map[string]bool{}
	for _, e := range eventsOf(r, "DisruptionLaunching") {
		if at(t, e.At) > 2*time.Hour-5*time.Minute {
			returning[e.Message[strings.LastIndex(e.Message, " ")+1:]] = true
		}
	}
	if len(eventsOf(r, "DisruptionLaunching")) == 0 {
		t.Error("no fallback node returned to spot")
	}
	for _, n := range nodesWhere(r, alive) {
		if len(n.Pods) == 0 && !returning[n.NodeClaim] {
			t.Errorf("node %s is empty at the end", n.Name)
		}
	}
}
