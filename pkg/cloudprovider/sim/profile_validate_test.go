package sim

import (
	"errors"
	"strings"
	"testing"
)

// A profile's required counts, its prices and its events are checked when
// the file loads, each error naming the file, the document and the field.
func TestProfileFieldsNameTheFile(t *testing.T) {
	const head = "apiVersion: sim.capstan.dev/v1alpha1\nkind: CloudProfile\nmetadata: {name: p}\nspec:\n  zones: [us-west-2a, us-west-2b]\n"
	const workload = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n"
	for _, tc := range []struct {
		name, spec string
		// other documents come first when set, so the profile is document 2
		second bool
		want   []string // lines of the error; none means the profile loads
	}{
		{name: "pool with count 0", spec: "  capacity: [{instanceType: c5.xlarge, zone: us-west-2a, capacityType: spot, count: 0}]\n"},
		{name: "pool without count", spec: "  capacity: [{instanceType: c5.xlarge, zone: us-west-2a, capacityType: spot}]\n",
			want: []string{"p.yaml, document 1: spec.capacity[0].count: Required value: a pool's count is how many instances it can launch; write 0 for none"}},
		{name: "second pool without count, document 2", second: true,
			spec: "  capacity:\n  - {instanceType: c5.xlarge, zone: us-west-2a, capacityType: spot, count: 3}\n  - {instanceType: c5.xlarge, zone: us-west-2b, capacityType: on-demand}\n",
			want: []string{"p.yaml, document 2: spec.capacity[1].count: Required value"}},
		{name: "pool with null count", spec: "  capacity: [{instanceType: c5.xlarge, zone: us-west-2a, capacityType: spot, count: null}]\n",
			want: []string{"spec.capacity[0].count: "}},
		{name: "reservation without count",
			spec: "  reservations: [{id: cr-1, instanceType: c5.xlarge, zone: us-west-2a, type: open, ownerID: \"111122223333\"}]\n",
			want: []string{"p.yaml, document 1: spec.reservations[0].count: Required value: a reservation's count is how many instances it holds", "spec.reservations[0].count: Invalid value: 0: must be at least 1"}},
		{name: "pool count not a number", spec: "  capacity: [{instanceType: c5.xlarge, zone: us-west-2a, capacityType: spot, count: many}]\n",
			want: []string{"decoding p.yaml, document 1"}},
		{name: "price", spec: "  spotPrices: [{instanceType: c5.xlarge, zone: \"*\", price: \"0.0634\"}]\n"},
		{name: "price not a number", spec: "  spotPrices: [{instanceType: c5.xlarge, zone: \"*\", price: cheap}]\n",
			want: []string{`p.yaml, document 1: spec.spotPrices[0].price: Invalid value: "cheap": must be a decimal number of dollars per hour, like "0.0634"`}},
		{name: "price in exponent form", spec: "  spotPrices: [{instanceType: c5.xlarge, zone: \"*\", price: \"1e-2\"}]\n",
			want: []string{`spec.spotPrices[0].price: Invalid value: "1e-2"`}},
		{name: "price out of range", spec: "  spotPrices: [{instanceType: c5.xlarge, zone: \"*\", price: \"" + strings.Repeat("9", 400) + "\"}]\n",
			want: []string{"spec.spotPrices[0].price: Invalid value"}},
		{name: "price too long", spec: "  spotPrices: [{instanceType: c5.xlarge, zone: \"*\", price: \"0." + strings.Repeat("1", 40) + "\"}]\n",
			want: []string{"spec.spotPrices[0].price: Invalid value"}},
		{name: "price zero", spec: "  spotPrices: [{instanceType: c5.xlarge, zone: \"*\", price: \"0.0\"}]\n",
			want: []string{`spec.spotPrices[0].price: Invalid value: "0.0": must be positive`}},
		// The decoder keeps a YAML number's text for a string field.
		{name: "price as a YAML number", spec: "  spotPrices: [{instanceType: c5.xlarge, zone: \"*\", price: 0.05}]\n"},
		{name: "event price not a number", second: true,
			spec: "  events: [{at: 1m, type: SpotPriceChange, instanceType: c5.xlarge, zone: \"*\", price: \"1,5\"}]\n",
			want: []string{`p.yaml, document 2: spec.events[0].price: Invalid value: "1,5"`}},
		{name: "capacity event without count",
			spec: "  events: [{at: 1m, type: CapacityChange, instanceType: c5.xlarge, zone: us-west-2a, capacityType: spot}]\n",
			want: []string{"p.yaml, document 1: spec.events[0].count: Required value"}},
		{name: "launch faults", spec: "  launchFaults:\n  - {code: UnauthorizedOperation, until: 10m}\n" +
			"  - {code: AuthFailure.ServiceLinkedRoleCreationNotPermitted, capacityType: spot, zone: us-west-2a, instanceType: c5.xlarge, nodeClass: default, from: 1m, count: 2, message: no role}\n"},
		{name: "launch fault without a code", spec: "  launchFaults: [{capacityType: spot}]\n",
			want: []string{"p.yaml, document 1: spec.launchFaults[0].code: Required value"}},
		{name: "launch fault with a bad code and matches", spec: "  launchFaults: [{code: \"Unauthorized Operation\", capacityType: cheap, zone: us-east-1a, instanceType: z9.huge, nodeClass: Not_A_Name}]\n",
			want: []string{`spec.launchFaults[0].code: Invalid value: "Unauthorized Operation"`, `spec.launchFaults[0].capacityType: Unsupported value: "cheap"`,
				`spec.launchFaults[0].zone: Unsupported value: "us-east-1a"`, `spec.launchFaults[0].instanceType: Invalid value: "z9.huge": not in the catalog`, `spec.launchFaults[0].nodeClass: Invalid value: "Not_A_Name"`}},
		{name: "launch fault with an empty window and no launches", spec: "  launchFaults: [{code: InsufficientInstanceCapacity, from: 5m, until: 5m, count: 0}]\n",
			want: []string{`spec.launchFaults[0].until: Invalid value: "5m0s": must be later than from (5m0s)`, "spec.launchFaults[0].count: Invalid value: 0: must be at least 1"}},
		{name: "event out of order", second: true,
			spec: "  events:\n  - {at: 2m, type: SpotInterruption, instanceType: c5.xlarge, zone: \"*\"}\n  - {at: 1m, type: SpotInterruption, instanceType: c5.xlarge, zone: \"*\"}\n",
			want: []string{"p.yaml, document 2: spec.events[1].at: Invalid value: \"1m0s\": is earlier than the event before it (2m0s)"}},
		{name: "repair policies", spec: "  repairPolicies: [{conditionType: Ready, conditionStatus: Unknown, tolerationDuration: 10s}]\n"},
		{name: "repair policy status", spec: "  repairPolicies: [{conditionType: Ready, conditionStatus: unknown, tolerationDuration: 10s}]\n",
			want: []string{`spec.repairPolicies[0].conditionStatus: Unsupported value: "unknown"`}},
		{name: "repair policy without a type", spec: "  repairPolicies: [{conditionStatus: \"False\", tolerationDuration: -1s}]\n",
			want: []string{"spec.repairPolicies[0].conditionType: Required value", `spec.repairPolicies[0].tolerationDuration: Invalid value: "-1s": must not be negative`}},
		{name: "kubelet stop", spec: "  events: [{at: 1m, type: KubeletStop, instanceType: c5.xlarge, zone: \"*\", count: 2}]\n"},
		{name: "instance stop of none", spec: "  events: [{at: 1m, type: InstanceStop, instanceType: c5.xlarge, zone: \"*\", count: 0}]\n",
			want: []string{"spec.events[0].count: Invalid value: 0: must be at least 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := head + tc.spec
			if tc.second {
				data = workload + data
			}
			_, err := LoadProfileBytes("p.yaml", []byte(data))
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("LoadProfileBytes: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("LoadProfileBytes loaded it, want %q", tc.want)
			}
			var perr *ProfileError
			if errors.As(err, &perr) && perr.Source == "" {
				t.Errorf("the error names no file: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}
