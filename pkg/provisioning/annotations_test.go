package provisioning

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestFlavorOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		names []string
		term  int
		want  string
	}{
		{"second flavor", []string{"a100", "a10g"}, 1, "a10g (2 of 2)"},
		{"first flavor", []string{"a100", "a10g"}, 0, "a100 (1 of 2)"},
		// Two terms of the pod's own per flavor: the rank counts flavors,
		// not terms.
		{"flavor-major terms", []string{"l4", "l4", "a100", "a100"}, 3, "a100 (2 of 2)"},
		{"a pod without flavors", nil, 0, ""},
		{"a model without flavors keeps the pod's terms", []string{"", ""}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FlavorOf(tc.names, tc.term); got != tc.want {
				t.Errorf("FlavorOf(%v, %d) = %q, want %q", tc.names, tc.term, got, tc.want)
			}
		})
	}
}

func TestFallbackReason(t *testing.T) {
	it := test.InstanceType(test.InstanceTypeOptions{Name: "c4.xlarge", CPU: 4, Memory: 8})
	clk := clocktesting.NewFakeClock(time.Now())
	u := cloudprovider.NewUnavailableOfferings(clk, 0)
	np := test.NodePool()
	c := &NodeClaim{InstanceTypes: []*cloudprovider.InstanceType{it}, CapacityType: v1.CapacityTypeSpot,
		Requirements: scheduling.NewRequirements(scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpNotIn, v1.CapacityTypeReserved))}
	if got := FallbackReason(np, c, u); got != "" {
		t.Errorf("spot still available, yet %q", got)
	}
	u.MarkUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "c4.xlarge", Zone: "zone-a"}, "InsufficientInstanceCapacity")
	u.MarkUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "c4.xlarge", Zone: "zone-b"}, "InsufficientInstanceCapacity")
	c.InstanceTypes, c.CapacityType = u.Apply(c.InstanceTypes), v1.CapacityTypeOnDemand
	if got := FallbackReason(np, c, u); !strings.Contains(got, "spot/c4.xlarge/zone-a InsufficientInstanceCapacity") {
		t.Errorf("fallback %q", got)
	}
	onlyOnDemand := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}}}
	})
	if got := FallbackReason(onlyOnDemand, c, u); got != "" {
		t.Errorf("a NodePool that never wanted spot fell back? %q", got)
	}
}

// A full reservation of a claim's instance type, in its zones, is a
// fallback reason where the NodePool allows reserved capacity; each
// capacity type lists at most five, reservations first.
func TestFallbackReasonReserved(t *testing.T) {
	offerings := func(zones ...string) cloudprovider.Offerings {
		out := cloudprovider.Offerings{
			{Zone: "zone-a", CapacityType: v1.CapacityTypeOnDemand, Price: 0.2, Available: cloudprovider.Unlimited},
			{Zone: "zone-a", CapacityType: v1.CapacityTypeSpot, Price: 0.1, Available: cloudprovider.Unlimited},
		}
		for i, z := range zones {
			out = append(out, &cloudprovider.Offering{Zone: z, CapacityType: v1.CapacityTypeReserved, ReservationID: fmt.Sprintf("cr-%d", i), Price: 2e-8})
		}
		return out
	}
	var many []*cloudprovider.InstanceType
	for i := range 7 {
		many = append(many, test.InstanceType(test.InstanceTypeOptions{Name: fmt.Sprintf("m5.%d", i+1), CPU: int64(i + 1), Memory: 2, Offerings: offerings("zone-a")}))
	}
	u := cloudprovider.NewUnavailableOfferings(clocktesting.NewFakeClock(time.Now()), 0)
	for _, it := range many {
		u.MarkUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: it.Name, Zone: "zone-a"}, "InsufficientInstanceCapacity")
	}
	pool := func(cts ...string) *v1.NodePool {
		return test.NodePool(func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: cts}}
		})
	}
	inZoneA := scheduling.NewRequirements(scheduling.NewRequirement(v1.LabelZone, corev1.NodeSelectorOpIn, "zone-a"))
	cases := []struct {
		name string
		np   *v1.NodePool
		its  []*cloudprovider.InstanceType
		want string
	}{
		{"a full reservation in the claim's zone", pool(v1.CapacityTypeReserved, v1.CapacityTypeOnDemand),
			[]*cloudprovider.InstanceType{test.InstanceType(test.InstanceTypeOptions{Name: "c4.xlarge", CPU: 4, Memory: 8, Offerings: offerings("zone-a", "zone-b")})},
			"preferred capacity unavailable: reserved/c4.xlarge/zone-a/cr-0 full"},
		{"the NodePool allows no reservation", pool(v1.CapacityTypeOnDemand),
			[]*cloudprovider.InstanceType{test.InstanceType(test.InstanceTypeOptions{Name: "c4.xlarge", CPU: 4, Memory: 8, Offerings: offerings("zone-a")})}, ""},
		{"five of each capacity type, reservations first", pool(v1.CapacityTypeReserved, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand), many,
			"preferred capacity unavailable: reserved/m5.1/zone-a/cr-0 full, reserved/m5.2/zone-a/cr-0 full, reserved/m5.3/zone-a/cr-0 full, " +
				"reserved/m5.4/zone-a/cr-0 full, reserved/m5.5/zone-a/cr-0 full, and 2 more, " +
				"spot/m5.1/zone-a InsufficientInstanceCapacity, spot/m5.2/zone-a InsufficientInstanceCapacity, spot/m5.3/zone-a InsufficientInstanceCapacity, " +
				"spot/m5.4/zone-a InsufficientInstanceCapacity, spot/m5.5/zone-a InsufficientInstanceCapacity, and 2 more"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &NodeClaim{InstanceTypes: tc.its, CapacityType: v1.CapacityTypeOnDemand, Requirements: inZoneA}
			got := FallbackReason(tc.np, c, u)
			if got != tc.want {
				t.Errorf("fallback\n%q, want\n%q", got, tc.want)
			}
			if got == "" {
				return
			}
			want := []string{v1.CapacityTypeReserved}
			if strings.Contains(tc.want, "spot/") {
				want = append(want, v1.CapacityTypeSpot)
			}
			if diff := cmp.Diff(want, FallbackFrom(got)); diff != "" {
				t.Errorf("FallbackFrom (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFallbackFrom(t *testing.T) {
	cases := []struct {
		annotation string
		want       []string
	}{
		{"", nil},
		{"preferred capacity unavailable: spot/c4.xlarge/zone-a InsufficientInstanceCapacity", []string{v1.CapacityTypeSpot}},
		// Written before reservations were listed: no prefix.
		{"spot/m5.4/zone-a InsufficientInstanceCapacity", []string{v1.CapacityTypeSpot}},
		{"preferred capacity unavailable: spot/a/z x, reserved/a/z/cr-1 full", []string{v1.CapacityTypeReserved, v1.CapacityTypeSpot}},
		{"preferred capacity unavailable: on-demand/a/z x, and 3 more", nil},
		{"hand-written: spotty/x", nil},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, FallbackFrom(tc.annotation)); diff != "" {
			t.Errorf("FallbackFrom(%q) (-want +got):\n%s", tc.annotation, diff)
		}
	}
}
