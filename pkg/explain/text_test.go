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

// What the answers carry comes from cluster objects anyone may write
// (Events, condition messages) or from the controller: the text escapes
// what does not print, newlines too, so one value can neither drive the
// terminal nor forge the lines after it.
func TestTextEscapesControlCharacters(t *testing.T) {
	const hostile = "x\x1b[2J\r\x1b]0;owned\x07\u009b2J\u202e\nNodePool forged: compatible"
	const escaped = `x\x1b[2J\r\x1b]0;owned\a\u009b2J\u202e\nNodePool forged: compatible`
	for _, tc := range []struct {
		name  string
		write func(*strings.Builder) error
		want  string
	}{
		{"a pod's last event", func(b *strings.Builder) error {
			return explain.WritePod(b, explain.Pod{Pod: "default/web", LastEvent: hostile})
		}, "  last reported: " + escaped + "\n"},
		{"a NodePool's verdict", func(b *strings.Builder) error {
			return explain.WritePod(b, explain.Pod{Pod: "default/web", NodePools: []explain.PoolVerdict{{NodePool: "p", Reason: "R", Message: hostile}}})
		}, "  NodePool p: R: " + escaped + "\n"},
		{"a NodePool's nodes", func(b *strings.Builder) error {
			return explain.WriteNodePool(b, explain.NodePool{NodePool: "p", Nodes: map[string]int{hostile: 1}})
		}, "  nodes: 1 " + escaped + "\n"},
		{"a node's condition", func(b *strings.Builder) error {
			return explain.WriteNode(b, explain.Node{NodeClaim: "n", Conditions: []explain.Condition{{Type: "Ready", Status: "False", Message: hostile, Since: time.Unix(0, 0)}}})
		}, "  Ready=False since 1970-01-01T00:00:00Z  " + escaped + "\n"},
		{"a node's reservation", func(b *strings.Builder) error {
			return explain.WriteNode(b, explain.Node{NodeClaim: "n", InstanceType: "m", CapacityType: "reserved", Zone: "z", ReservationID: hostile})
		}, "  instance: m, reserved, z, reservation " + escaped + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.want) {
				t.Errorf("text lacks %q:\n%s", tc.want, b.String())
			}
			if strings.Contains(b.String(), "\nNodePool forged") || strings.ContainsAny(b.String(), "\x1b\r\x07\u009b\u202e") {
				t.Errorf("text has raw control characters or a forged line: %q", b.String())
			}
		})
	}
}
