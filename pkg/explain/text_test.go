package explain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/budgets"
	"github.com/capstan-dev/capstan/pkg/explain"
)

func TestText(t *testing.T) {
	cost := 0.35
	var b strings.Builder
	if err := explain.WritePod(&b, explain.Pod{
		Pod: "default/web", Considered: true, Consideration: "default-scheduler marked it Unschedulable", Next: "launch a NodeClaim from NodePool good: m.xlarge (spot, 0.0800/h)",
		NodePools: []explain.PoolVerdict{
			{NodePool: "good", Compatible: true, Cheapest: []explain.Option{{InstanceType: "m.xlarge", CapacityType: "spot", PricePerHour: 0.08}}},
			{NodePool: "limited", Reason: "NodePoolLimitExceeded", Message: "over", Limits: []explain.Limit{{Resource: "cpu", Used: "0", Limit: "1"}}},
		},
		Unknown: []string{"the cache"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := explain.WriteNodePool(&b, explain.NodePool{
		NodePool: "web", Nodes: map[string]int{"spot": 1}, CostPerHour: &cost, TimeZone: "Asia/Tokyo",
		Budgets:            []budgets.Status{{Nodes: "0", Schedule: "@daily", Duration: "1h0m0s", Change: time.Date(2026, 1, 1, 15, 0, 0, 0, time.UTC)}},
		DisruptionsAllowed: map[string]int{"Underutilized": 2, "Drifted": 1, "Empty": 0}, Disrupting: 1,
	}); err != nil {
		t.Fatal(err)
	}
	if err := explain.WriteNode(&b, explain.Node{NodeClaim: "web-x", NodePool: "web", Lifecycle: "Launching", Disruption: "not a disruption candidate: its Node has not registered yet"}); err != nil {
		t.Fatal(err)
	}
	if err := explain.WriteNode(&b, explain.Node{NodeClaim: "web-y", Node: "y", NodePool: "web", Lifecycle: "Ready", Candidate: true,
		Disruption: "drifted since …; it runs 1 pod; Drift may not disrupt it now: disruption budget of 0 for Drifted",
		DisruptionVerdicts: []explain.DisruptionVerdict{
			{Method: "Drift", Event: "DisruptionBlocked", Message: "disruption budget of 0 for Drifted"},
			{Method: "Emptiness", Event: "Unconsolidatable", Message: "disruption budget of 0 for Empty"},
		},
		DisruptionsAllowed: map[string]int{"Empty": 0, "Drifted": 0, "Underutilized": 1},
		Unknown:            []string{"the Drift feature gate"},
	}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"considered: default-scheduler marked it Unschedulable",
		"next provisioning: launch a NodeClaim from NodePool good",
		"NodePool good: compatible; cheapest: m.xlarge (spot, 0.0800/h)",
		"NodePool limited: NodePoolLimitExceeded: over",
		"limit cpu: 0 used of 1",
		"not known here: the cache",
		"nodes: 1 spot",
		"cost: 0.3500 per hour",
		`budget 0 nodes (all reasons): not in force, schedule "@daily" for 1h0m0s; opens 2026-01-01 15:00 UTC (2026-01-02 00:00 Asia/Tokyo)`,
		"disruptions allowed now: Empty 0, Drifted 1, Underutilized 2; disrupting: 1 node (being deleted or NotReady)",
		"NodeClaim web-x (node none yet, NodePool web): Launching\n  disruption: not a disruption candidate: its Node has not registered yet\n",
		"  disruption: drifted since …; it runs 1 pod; Drift may not disrupt it now: disruption budget of 0 for Drifted\n    also Emptiness: disruption budget of 0 for Empty\n",
		"disruptions allowed now in NodePool web: Empty 0, Drifted 0, Underutilized 1",
		"not known here: the Drift feature gate",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}
