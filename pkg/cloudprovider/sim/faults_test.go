package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// A launch fault refuses the offerings it matches while in force, with
// its code, and Create classes the answer as every provider does.
func TestLaunchFaults(t *testing.T) {
	minute := func(n int) *metav1.Duration { return &metav1.Duration{Duration: time.Duration(n) * time.Minute} }
	m5 := in(v1.LabelInstanceType, "m5.large")
	type outcome struct {
		Launched bool
		// Code is a refusal's; Capacity an insufficient-capacity error's
		// codes.
		Code     string
		Capacity []string
		Wide     []string
	}
	for _, tc := range []struct {
		name   string
		faults []simv1alpha1.LaunchFault
		reqs   []v1.NodeSelectorRequirementWithMinValues
		// at is how long after the start each launch is tried.
		at   []time.Duration
		want []outcome
	}{
		{"a refusal in force refuses every matching offering", []simv1alpha1.LaunchFault{{Code: "UnauthorizedOperation", Until: minute(5)}},
			[]v1.NodeSelectorRequirementWithMinValues{m5, in(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)},
			[]time.Duration{0, 5 * time.Minute}, []outcome{{Code: "UnauthorizedOperation"}, {Launched: true}}},
		{"not yet in force", []simv1alpha1.LaunchFault{{Code: "UnauthorizedOperation", From: minute(1)}},
			[]v1.NodeSelectorRequirementWithMinValues{m5, in(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)},
			[]time.Duration{0, time.Minute}, []outcome{{Launched: true}, {Code: "UnauthorizedOperation"}}},
		{"a count of launches", []simv1alpha1.LaunchFault{{Code: "InvalidParameterValue", Count: ptr.To(1)}},
			[]v1.NodeSelectorRequirementWithMinValues{m5, in(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)},
			[]time.Duration{0, 0}, []outcome{{Code: "InvalidParameterValue"}, {Launched: true}}},
		{"another zone launches past a zonal fault", []simv1alpha1.LaunchFault{{Code: "InsufficientInstanceCapacity", Zone: "us-west-2a"}},
			[]v1.NodeSelectorRequirementWithMinValues{m5, in(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)},
			[]time.Duration{0}, []outcome{{Launched: true}}},
		{"the spot service-linked role marks spot account-wide", []simv1alpha1.LaunchFault{{Code: "AuthFailure.ServiceLinkedRoleCreationNotPermitted", CapacityType: v1.CapacityTypeSpot}},
			[]v1.NodeSelectorRequirementWithMinValues{m5, in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot)},
			[]time.Duration{0}, []outcome{{Capacity: []string{"AuthFailure.ServiceLinkedRoleCreationNotPermitted"}, Wide: []string{v1.CapacityTypeSpot}}}},
		{"a refusal beside a capacity fault keeps the capacity mark", []simv1alpha1.LaunchFault{
			{Code: "InsufficientInstanceCapacity", Zone: "us-west-2a"}, {Code: "UnauthorizedOperation", Zone: "us-west-2b"}},
			[]v1.NodeSelectorRequirementWithMinValues{m5, in(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)},
			[]time.Duration{0}, []outcome{{Code: "UnauthorizedOperation", Capacity: []string{"InsufficientInstanceCapacity"}}}},
		{"another NodeClass is not refused", []simv1alpha1.LaunchFault{{Code: "UnauthorizedOperation", NodeClass: "other"}},
			[]v1.NodeSelectorRequirementWithMinValues{m5}, []time.Duration{0}, []outcome{{Launched: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) { s.LaunchFaults = tc.faults }))
			start := f.clock.Now()
			var got []outcome
			for i, at := range tc.at {
				f.clock.SetTime(start.Add(at))
				_, err := f.cloud.Create(context.Background(), claim("nc-"+string(rune('a'+i)), tc.reqs...))
				var o outcome
				ice, _ := cloudprovider.AsInsufficientCapacityError(err)
				if ce, ok := cloudprovider.AsCreateError(err); ok {
					o.Code, ice = ce.Code, ce.Unavailable
				}
				switch {
				case err == nil:
					o.Launched = true
				case ice == nil && o.Code == "":
					t.Fatalf("launch %d: %v", i, err)
				}
				if ice != nil {
					o.Capacity, o.Wide = ice.Codes(), ice.CapacityTypeWide
				}
				got = append(got, o)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("launches (-want +got):\n%s", diff)
			}
		})
	}
}

// Launch reports each refused offering with the fault's code and message,
// for the EC2 endpoint to answer per override.
func TestLaunchFaultsThroughLaunch(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
		s.LaunchFaults = []simv1alpha1.LaunchFault{{Code: "InvalidParameterValue", Message: "Invalid IAM Instance Profile name", Zone: "us-west-2a"}}
	}))
	_, err := f.cloud.Launch(context.Background(), launchRequest(v1.CapacityTypeOnDemand, sim.AllocationPrioritized, offering("m5.large", "us-west-2a")))
	le, ok := errors.AsType[*sim.LaunchError](err)
	if !ok {
		t.Fatalf("Launch: %v, want a *sim.LaunchError", err)
	}
	want := []cloudprovider.OfferingError{{Offering: cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeOnDemand, InstanceType: "m5.large", Zone: "us-west-2a"},
		Code: "InvalidParameterValue", Message: "Invalid IAM Instance Profile name"}}
	if diff := cmp.Diff(want, le.Failed); diff != "" {
		t.Errorf("failed offerings (-want +got):\n%s", diff)
	}
	if ce, ok := cloudprovider.AsCreateError(err); !ok || ce.Code != "InvalidParameterValue" {
		t.Errorf("Launch's error %v, want a refusal with the fault's code", err)
	}
	res, err := f.cloud.Launch(context.Background(), launchRequest(v1.CapacityTypeOnDemand, sim.AllocationPrioritized, offering("m5.large", "us-west-2a"), offering("m5.large", "us-west-2b")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Offering != 1 || len(res.Failed) != 1 || res.Failed[0].Code != "InvalidParameterValue" {
		t.Errorf("launched offering %d after %+v, want 1 after the refusal in us-west-2a", res.Offering, res.Failed)
	}
}
