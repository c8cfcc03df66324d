package simulator

import (
	"strings"
	"testing"
)

func TestWriteText(t *testing.T) {
	r := &Result{
		Nodes: []Node{
			{Name: "n1", NodePool: "default", InstanceType: "c4.xlarge", Zone: "z1", CapacityType: "on-demand", PricePerHour: 0.25, Pods: []string{"ns/a", "ns/b"}},
			{Name: "n2", NodePool: "default", InstanceType: "c4.xlarge", Zone: "z1", CapacityType: "on-demand", PricePerHour: 0.25, Pods: []string{"ns/c"}},
			{Name: "n3", NodePool: "default", InstanceType: "c4.xlarge", Zone: "z1", CapacityType: "spot", DeletedAt: "5m0s"},
		},
		Pods: []Pod{{Name: "ns/a", Node: "n1"}, {Name: "ns/d", PendingReason: "NodePoolLimitExceeded: over the cpu limit"}},
		Events: []Event{
			{At: "1s", Kind: "Launched", Object: "nodeclaim/x"},
			{At: "2m0s", Kind: "SpotInterruption", Object: "node/n3", Message: "spot capacity reclaimed"},
		},
		Summary: Summary{NodesLaunched: 3, NodesAtEnd: 2, PodsPending: 1, CostPerHourAtEnd: 0.5, TotalCost: 1, Duration: "2h0m0s",
			ByCapacityType: map[string]int{"on-demand": 2, "spot": 0, "reserved": 0}},
	}
	var b strings.Builder
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"3 node(s) launched, 2 at the end (0 spot, 2 on-demand, 0 reserved), 1 pod(s) pending",
		"0.5000 per hour at the end, 1.0000 in total",
		"default   c4.xlarge      z1    on-demand      2      0.2500        3",
		"ns/d  NodePoolLimitExceeded: over the cpu limit",
		"2m0s  SpotInterruption  node/n3  spot capacity reclaimed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Launched") || strings.Contains(out, "spot           1") {
		t.Errorf("launches are in the table, not the key events, and deleted nodes are not at the end:\n%s", out)
	}
}
