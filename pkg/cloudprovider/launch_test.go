package cloudprovider_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestLaunchCandidates(t *testing.T) {
	od, spot, reserved := v1.CapacityTypeOnDemand, v1.CapacityTypeSpot, v1.CapacityTypeReserved
	unlimited := cloudprovider.Unlimited
	// small: 2 CPUs, on-demand 0.10, spot 0.04 in a and 0.12 (dearer than
	// any on-demand) in b, and a reservation in a with free slots.
	small := func(slots, spotA int) *cloudprovider.InstanceType {
		return test.InstanceType(test.InstanceTypeOptions{Name: "small", CPU: 2, Memory: 4, Offerings: cloudprovider.Offerings{
			{Zone: "a", CapacityType: od, Price: 0.10, Available: unlimited},
			{Zone: "b", CapacityType: od, Price: 0.10, Available: unlimited},
			{Zone: "a", CapacityType: spot, Price: 0.04, Available: spotA},
			{Zone: "b", CapacityType: spot, Price: 0.12, Available: unlimited},
			{Zone: "a", CapacityType: reserved, ReservationID: "cr-1", Price: 1e-8, Available: slots},
		}})
	}
	large := test.InstanceType(test.InstanceTypeOptions{Name: "large", CPU: 8, Memory: 16, Offerings: cloudprovider.Offerings{
		{Zone: "a", CapacityType: od, Price: 0.40, Available: unlimited},
		{Zone: "a", CapacityType: spot, Price: 0.11, Available: unlimited},
	}})
	in := func(key string, values ...string) *scheduling.Requirement {
		return scheduling.NewRequirement(key, corev1.NodeSelectorOpIn, values...)
	}
	type pick struct{ Type, Zone, CapacityType string }
	cases := []struct {
		name  string
		its   []*cloudprovider.InstanceType
		reqs  scheduling.Requirements
		cpu   string
		ct    string
		picks []pick
	}{
		{"a free reservation first", []*cloudprovider.InstanceType{small(1, unlimited), large}, scheduling.NewRequirements(), "1",
			reserved, []pick{{"small", "a", reserved}}},
		{"spot once the reservation is full, none dearer than the cheapest on-demand", []*cloudprovider.InstanceType{small(0, unlimited), large}, scheduling.NewRequirements(), "1",
			spot, []pick{{"small", "a", spot}}},
		{"spot needs a type that fits", []*cloudprovider.InstanceType{small(0, unlimited), large}, scheduling.NewRequirements(), "4",
			spot, []pick{{"large", "a", spot}}},
		{"on-demand when spot is out, cheapest first", []*cloudprovider.InstanceType{small(0, 0), large}, scheduling.NewRequirements(in(v1.CapacityTypeLabelKey, spot, od)), "1",
			od, []pick{{"small", "a", od}, {"small", "b", od}, {"large", "a", od}}},
		{"the requirements' capacity types only", []*cloudprovider.InstanceType{small(1, unlimited), large}, scheduling.NewRequirements(in(v1.CapacityTypeLabelKey, od)), "1",
			od, []pick{{"small", "a", od}, {"small", "b", od}, {"large", "a", od}}},
		{"the requirements' zones only", []*cloudprovider.InstanceType{small(1, unlimited)}, scheduling.NewRequirements(in(v1.LabelZone, "b")), "1",
			od, []pick{{"small", "b", od}}},
		{"nothing fits", []*cloudprovider.InstanceType{small(1, unlimited)}, scheduling.NewRequirements(), "16", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ct, cands := cloudprovider.LaunchCandidates(tc.its, tc.reqs, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(tc.cpu)})
			var got []pick
			for _, c := range cands {
				got = append(got, pick{c.InstanceType.Name, c.Offering.Zone, c.Offering.CapacityType})
			}
			if ct != tc.ct {
				t.Errorf("capacity type %q, want %q", ct, tc.ct)
			}
			if diff := cmp.Diff(tc.picks, got); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
		})
	}
}
