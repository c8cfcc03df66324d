package cloudprovider_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/test"
)

// quantityEqual compares Quantities by value, not by representation.
var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func resources(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func TestOverheadTotal(t *testing.T) {
	cases := []struct {
		name     string
		overhead cloudprovider.Overhead
		want     corev1.ResourceList
	}{
		{name: "none is empty", want: corev1.ResourceList{}},
		{
			name:     "one reservation alone",
			overhead: cloudprovider.Overhead{SystemReserved: resources("cpu", "100m")},
			want:     resources("cpu", "100m"),
		},
		{
			name: "all three summed per resource",
			overhead: cloudprovider.Overhead{
				KubeReserved:      resources("cpu", "80m", "memory", "512Mi"),
				SystemReserved:    resources("cpu", "20m", "memory", "100Mi", "ephemeral-storage", "1Gi"),
				EvictionThreshold: resources("memory", "100Mi", "ephemeral-storage", "512Mi"),
			},
			want: resources("cpu", "100m", "memory", "712Mi", "ephemeral-storage", "1536Mi"),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.overhead.KubeReserved.DeepCopy()
			if diff := cmp.Diff(tc.want, tc.overhead.Total(), quantityEqual); diff != "" {
				t.Errorf("Total (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.overhead.KubeReserved, quantityEqual); diff != "" {
				t.Errorf("Total changed KubeReserved (-before +after):\n%s", diff)
			}
		})
	}
}

func TestAllocatable(t *testing.T) {
	cases := []struct {
		name     string
		capacity corev1.ResourceList
		overhead cloudprovider.Overhead
		want     corev1.ResourceList
	}{
		{
			name:     "no overhead leaves capacity",
			capacity: resources("cpu", "4", "memory", "16Gi", "pods", "110"),
			want:     resources("cpu", "4", "memory", "16Gi", "pods", "110"),
		},
		{
			name:     "overhead subtracted, resources without overhead unchanged",
			capacity: resources("cpu", "4", "memory", "16Gi", "pods", "110", "nvidia.com/gpu", "1"),
			overhead: cloudprovider.Overhead{
				KubeReserved:      resources("cpu", "100m", "memory", "1Gi"),
				EvictionThreshold: resources("memory", "100Mi"),
			},
			want: resources("cpu", "3900m", "memory", "15260Mi", "pods", "110", "nvidia.com/gpu", "1"),
		},
		{
			name:     "overhead above capacity clamps to zero",
			capacity: resources("cpu", "1", "memory", "1Gi"),
			overhead: cloudprovider.Overhead{KubeReserved: resources("cpu", "2"), SystemReserved: resources("memory", "1Gi")},
			want:     resources("cpu", "0", "memory", "0"),
		},
		{
			name:     "overhead on a resource the type lacks is ignored",
			capacity: resources("cpu", "2"),
			overhead: cloudprovider.Overhead{KubeReserved: resources("ephemeral-storage", "1Gi")},
			want:     resources("cpu", "2"),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			it := &cloudprovider.InstanceType{Name: "t", Capacity: tc.capacity, Overhead: tc.overhead}
			before := tc.capacity.DeepCopy()
			if diff := cmp.Diff(tc.want, it.Allocatable(), quantityEqual); diff != "" {
				t.Errorf("Allocatable (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, it.Capacity, quantityEqual); diff != "" {
				t.Errorf("Allocatable changed Capacity (-before +after):\n%s", diff)
			}
		})
	}
}

func TestOfferingRequirements(t *testing.T) {
	cases := []struct {
		name     string
		offering cloudprovider.Offering
		want     []v1.NodeSelectorRequirementWithMinValues
	}{
		{
			name:     "zone and capacity type",
			offering: cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeSpot},
			want: []v1.NodeSelectorRequirementWithMinValues{
				{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot}},
				{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-a"}},
			},
		},
		{
			name:     "with a reservation, its id, type (default when unset) and interruptible too",
			offering: cloudprovider.Offering{Zone: "zone-b", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1"},
			want: []v1.NodeSelectorRequirementWithMinValues{
				{Key: v1.LabelCapacityReservationID, Operator: corev1.NodeSelectorOpIn, Values: []string{"cr-1"}},
				{Key: v1.LabelCapacityReservationInterruptible, Operator: corev1.NodeSelectorOpIn, Values: []string{"false"}},
				{Key: v1.LabelCapacityReservationType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.ReservationTypeDefault}},
				{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeReserved}},
				{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-b"}},
			},
		},
		{
			name: "an interruptible capacity block",
			offering: cloudprovider.Offering{Zone: "zone-b", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-2",
				ReservationType: v1.ReservationTypeCapacityBlock, ReservationInterruptible: true},
			want: []v1.NodeSelectorRequirementWithMinValues{
				{Key: v1.LabelCapacityReservationID, Operator: corev1.NodeSelectorOpIn, Values: []string{"cr-2"}},
				{Key: v1.LabelCapacityReservationInterruptible, Operator: corev1.NodeSelectorOpIn, Values: []string{"true"}},
				{Key: v1.LabelCapacityReservationType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.ReservationTypeCapacityBlock}},
				{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeReserved}},
				{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-b"}},
			},
		},
		{
			name:     "with a zone id, the id too",
			offering: cloudprovider.Offering{Zone: "us-east-1a", ZoneID: "use1-az1", CapacityType: v1.CapacityTypeOnDemand},
			want: []v1.NodeSelectorRequirementWithMinValues{
				{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}},
				{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1a"}},
				{Key: v1.LabelZoneID, Operator: corev1.NodeSelectorOpIn, Values: []string{"use1-az1"}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reqs := tc.offering.Requirements()
			if diff := cmp.Diff(tc.want, reqs.NodeSelectorRequirements(), cmpopts.SortSlices(func(a, b v1.NodeSelectorRequirementWithMinValues) bool { return a.Key < b.Key })); diff != "" {
				t.Errorf("Requirements (-want +got):\n%s", diff)
			}
			// An offering must be compatible with the labels it gives nodes.
			if !tc.offering.CompatibleWith(reqs) {
				t.Errorf("offering %s is not compatible with its own requirements %s", &tc.offering, reqs)
			}
		})
	}
}

func offeringNames(ofs cloudprovider.Offerings) []string {
	var names []string
	for _, o := range ofs {
		names = append(names, o.String())
	}
	return names
}

func TestOfferingsAvailable(t *testing.T) {
	ofs := cloudprovider.Offerings{
		{Zone: "a", CapacityType: v1.CapacityTypeSpot, Available: cloudprovider.Unlimited},
		{Zone: "b", CapacityType: v1.CapacityTypeSpot, Available: 0},
		{Zone: "a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1", Available: 2},
		{Zone: "b", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-2", Available: 0},
		{Zone: "c", CapacityType: v1.CapacityTypeOnDemand, Available: 1},
	}
	before := offeringNames(ofs)
	got := ofs.Available()
	if diff := cmp.Diff([]string{"spot/a", "reserved/a/cr-1", "on-demand/c"}, offeringNames(got)); diff != "" {
		t.Errorf("Available (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, offeringNames(ofs)); diff != "" {
		t.Errorf("Available changed the receiver (-before +after):\n%s", diff)
	}
	if got := (cloudprovider.Offerings{{Zone: "a", Available: 0}}).Available(); len(got) != 0 {
		t.Errorf("Available of only unavailable offerings = %v, want none", offeringNames(got))
	}
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) *scheduling.Requirement {
	return scheduling.NewRequirement(key, op, values...)
}

func TestOfferingCompatibleWith(t *testing.T) {
	const (
		in           = corev1.NodeSelectorOpIn
		notIn        = corev1.NodeSelectorOpNotIn
		exists       = corev1.NodeSelectorOpExists
		doesNotExist = corev1.NodeSelectorOpDoesNotExist
	)
	spotA := &cloudprovider.Offering{Zone: "a", CapacityType: v1.CapacityTypeSpot}
	reservedA := &cloudprovider.Offering{Zone: "a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1"}
	onDemandAZ1 := &cloudprovider.Offering{Zone: "a", ZoneID: "az1", CapacityType: v1.CapacityTypeOnDemand}
	blockA := &cloudprovider.Offering{Zone: "a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-2", ReservationType: v1.ReservationTypeCapacityBlock}
	interruptibleA := &cloudprovider.Offering{Zone: "a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-3", ReservationInterruptible: true}
	cases := []struct {
		name     string
		offering *cloudprovider.Offering
		reqs     scheduling.Requirements
		want     bool
	}{
		{name: "reservation type In capacity-block, a block", offering: blockA, reqs: scheduling.NewRequirements(req(v1.LabelCapacityReservationType, in, v1.ReservationTypeCapacityBlock)), want: true},
		{name: "reservation type In capacity-block, a default reservation", offering: reservedA, reqs: scheduling.NewRequirements(req(v1.LabelCapacityReservationType, in, v1.ReservationTypeCapacityBlock))},
		{name: "reservation type In default, a default reservation", offering: reservedA, reqs: scheduling.NewRequirements(req(v1.LabelCapacityReservationType, in, v1.ReservationTypeDefault)), want: true},
		{name: "reservation type NotIn capacity-block, a block", offering: blockA, reqs: scheduling.NewRequirements(req(v1.LabelCapacityReservationType, notIn, v1.ReservationTypeCapacityBlock))},
		{name: "reservation type NotIn capacity-block, spot", offering: spotA, reqs: scheduling.NewRequirements(req(v1.LabelCapacityReservationType, notIn, v1.ReservationTypeCapacityBlock)), want: true},
		{name: "reservation type In default, spot", offering: spotA, reqs: scheduling.NewRequirements(req(v1.LabelCapacityReservationType, in, v1.ReservationTypeDefault))},
		{name: "interruptible In false, an interruptible one", offering: interruptibleA, reqs: scheduling.NewRequirements(req(v1.LabelCapacityReservationInterruptible, in, "false"))},
		{name: "interruptible In false, a default one", offering: reservedA, reqs: scheduling.NewRequirements(req(v1.LabelCapacityReservationInterruptible, in, "false")), want: true},
		{name: "interruptible NotIn true, on-demand", offering: onDemandAZ1, reqs: scheduling.NewRequirements(req(v1.LabelCapacityReservationInterruptible, notIn, "true")), want: true},
		{name: "interruptible Exists, on-demand", offering: onDemandAZ1, reqs: scheduling.NewRequirements(req(v1.LabelCapacityReservationInterruptible, exists))},
		{name: "no requirements", offering: spotA, reqs: scheduling.NewRequirements(), want: true},
		{name: "nil requirements", offering: reservedA, want: true},
		{name: "unrelated keys are ignored", offering: spotA, reqs: scheduling.NewRequirements(req(v1.LabelArch, in, "arm64")), want: true},
		{name: "zone In", offering: spotA, reqs: scheduling.NewRequirements(req(v1.LabelZone, in, "a", "b")), want: true},
		{name: "zone In another", offering: spotA, reqs: scheduling.NewRequirements(req(v1.LabelZone, in, "b"))},
		{name: "zone NotIn", offering: spotA, reqs: scheduling.NewRequirements(req(v1.LabelZone, notIn, "a"))},
		{name: "zone DoesNotExist", offering: spotA, reqs: scheduling.NewRequirements(req(v1.LabelZone, doesNotExist))},
		{name: "capacity type In", offering: spotA, reqs: scheduling.NewRequirements(req(v1.CapacityTypeLabelKey, in, v1.CapacityTypeSpot)), want: true},
		{name: "capacity type In another", offering: spotA, reqs: scheduling.NewRequirements(req(v1.CapacityTypeLabelKey, in, v1.CapacityTypeOnDemand))},
		{
			name:     "zone allowed but capacity type not",
			offering: spotA,
			reqs:     scheduling.NewRequirements(req(v1.LabelZone, in, "a"), req(v1.CapacityTypeLabelKey, notIn, v1.CapacityTypeSpot)),
		},
		{
			name:     "reservation id In, offering unreserved",
			offering: spotA,
			reqs:     scheduling.NewRequirements(req(v1.LabelCapacityReservationID, in, "cr-1")),
		},
		{
			name:     "reservation id Exists, offering unreserved",
			offering: spotA,
			reqs:     scheduling.NewRequirements(req(v1.LabelCapacityReservationID, exists)),
		},
		{
			name:     "reservation id NotIn, offering unreserved",
			offering: spotA,
			reqs:     scheduling.NewRequirements(req(v1.LabelCapacityReservationID, notIn, "cr-1")),
			want:     true,
		},
		{
			name:     "reservation id DoesNotExist, offering unreserved",
			offering: spotA,
			reqs:     scheduling.NewRequirements(req(v1.LabelCapacityReservationID, doesNotExist)),
			want:     true,
		},
		{
			name:     "reservation id In its id",
			offering: reservedA,
			reqs:     scheduling.NewRequirements(req(v1.LabelCapacityReservationID, in, "cr-1", "cr-2")),
			want:     true,
		},
		{
			name:     "reservation id In another id",
			offering: reservedA,
			reqs:     scheduling.NewRequirements(req(v1.LabelCapacityReservationID, in, "cr-2")),
		},
		{
			name:     "reservation id NotIn its id",
			offering: reservedA,
			reqs:     scheduling.NewRequirements(req(v1.LabelCapacityReservationID, notIn, "cr-1")),
		},
		{
			name:     "reservation id NotIn another id",
			offering: reservedA,
			reqs:     scheduling.NewRequirements(req(v1.LabelCapacityReservationID, notIn, "cr-2")),
			want:     true,
		},
		{
			name:     "reservation id DoesNotExist, offering reserved",
			offering: reservedA,
			reqs:     scheduling.NewRequirements(req(v1.LabelCapacityReservationID, doesNotExist)),
		},
		{
			name:     "reservation id matches but zone does not",
			offering: reservedA,
			reqs:     scheduling.NewRequirements(req(v1.LabelCapacityReservationID, in, "cr-1"), req(v1.LabelZone, in, "b")),
		},
		{
			name:     "reservation id matches but capacity type does not",
			offering: reservedA,
			reqs:     scheduling.NewRequirements(req(v1.LabelCapacityReservationID, in, "cr-1"), req(v1.CapacityTypeLabelKey, in, v1.CapacityTypeSpot)),
		},
		{name: "zone id In its id", offering: onDemandAZ1, reqs: scheduling.NewRequirements(req(v1.LabelZoneID, in, "az1", "az2")), want: true},
		{name: "zone id In another id", offering: onDemandAZ1, reqs: scheduling.NewRequirements(req(v1.LabelZoneID, in, "az2"))},
		{name: "zone id NotIn its id", offering: onDemandAZ1, reqs: scheduling.NewRequirements(req(v1.LabelZoneID, notIn, "az1"))},
		{name: "zone id Exists", offering: onDemandAZ1, reqs: scheduling.NewRequirements(req(v1.LabelZoneID, exists)), want: true},
		{name: "zone id DoesNotExist, offering has one", offering: onDemandAZ1, reqs: scheduling.NewRequirements(req(v1.LabelZoneID, doesNotExist))},
		{name: "zone id In, offering has none", offering: spotA, reqs: scheduling.NewRequirements(req(v1.LabelZoneID, in, "az1"))},
		{name: "zone id Exists, offering has none", offering: spotA, reqs: scheduling.NewRequirements(req(v1.LabelZoneID, exists))},
		{name: "zone id NotIn, offering has none", offering: spotA, reqs: scheduling.NewRequirements(req(v1.LabelZoneID, notIn, "az1")), want: true},
		{
			name:     "zone id matches but zone does not",
			offering: onDemandAZ1,
			reqs:     scheduling.NewRequirements(req(v1.LabelZoneID, in, "az1"), req(v1.LabelZone, in, "b")),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.offering.CompatibleWith(tc.reqs); got != tc.want {
				t.Errorf("%s.CompatibleWith(%s) = %v, want %v", tc.offering, tc.reqs, got, tc.want)
			}
		})
	}
}

func TestOfferingCompatibleWithDoesNotAllocate(t *testing.T) {
	o := &cloudprovider.Offering{Zone: "a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1"}
	reqs := scheduling.NewRequirements(
		req(v1.LabelZone, corev1.NodeSelectorOpIn, "a", "b"),
		req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeReserved, v1.CapacityTypeOnDemand),
		req(v1.LabelCapacityReservationID, corev1.NodeSelectorOpIn, "cr-1"),
	)
	if !o.CompatibleWith(reqs) {
		t.Fatal("offering not compatible; the allocation check would test the wrong path")
	}
	if allocs := testing.AllocsPerRun(100, func() { o.CompatibleWith(reqs) }); allocs != 0 {
		t.Errorf("CompatibleWith allocates %v times", allocs)
	}
}

func TestOfferingsCompatible(t *testing.T) {
	ofs := cloudprovider.Offerings{
		{Zone: "a", CapacityType: v1.CapacityTypeSpot},
		{Zone: "b", CapacityType: v1.CapacityTypeSpot},
		{Zone: "a", CapacityType: v1.CapacityTypeOnDemand},
		{Zone: "a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1"},
	}
	cases := []struct {
		name string
		reqs scheduling.Requirements
		want []string
	}{
		{name: "no requirements keeps all", reqs: scheduling.NewRequirements(), want: []string{"spot/a", "spot/b", "on-demand/a", "reserved/a/cr-1"}},
		{name: "zone", reqs: scheduling.NewRequirements(req(v1.LabelZone, corev1.NodeSelectorOpIn, "a")), want: []string{"spot/a", "on-demand/a", "reserved/a/cr-1"}},
		{
			name: "no reservation",
			reqs: scheduling.NewRequirements(req(v1.LabelCapacityReservationID, corev1.NodeSelectorOpDoesNotExist)),
			want: []string{"spot/a", "spot/b", "on-demand/a"},
		},
		{name: "none match", reqs: scheduling.NewRequirements(req(v1.LabelZone, corev1.NodeSelectorOpIn, "z"))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, offeringNames(ofs.Compatible(tc.reqs))); diff != "" {
				t.Errorf("Compatible (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOfferingsCheapest(t *testing.T) {
	cases := []struct {
		name string
		ofs  cloudprovider.Offerings
		want string
	}{
		{name: "nil for none"},
		{name: "nil for empty", ofs: cloudprovider.Offerings{}},
		{name: "the only one", ofs: cloudprovider.Offerings{{Zone: "a", CapacityType: "spot", Price: 1}}, want: "spot/a"},
		{
			name: "lowest price",
			ofs: cloudprovider.Offerings{
				{Zone: "a", CapacityType: "on-demand", Price: 0.1},
				{Zone: "b", CapacityType: "spot", Price: 0.04},
				{Zone: "a", CapacityType: "reserved", ReservationID: "cr-1", Price: 1e-8},
				{Zone: "a", CapacityType: "spot", Price: 0.03},
			},
			want: "reserved/a/cr-1",
		},
		{
			name: "the first of equal prices",
			ofs: cloudprovider.Offerings{
				{Zone: "a", CapacityType: "on-demand", Price: 0.2},
				{Zone: "b", CapacityType: "spot", Price: 0.1},
				{Zone: "a", CapacityType: "spot", Price: 0.1},
			},
			want: "spot/b",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.ofs.Cheapest()
			if tc.want == "" {
				if got != nil {
					t.Errorf("Cheapest = %s, want nil", got)
				}
				return
			}
			if got == nil || got.String() != tc.want {
				t.Errorf("Cheapest = %v, want %s", got, tc.want)
			}
		})
	}
}

func TestOfferingString(t *testing.T) {
	cases := []struct {
		offering cloudprovider.Offering
		want     string
	}{
		{cloudprovider.Offering{Zone: "us-east-1a", CapacityType: v1.CapacityTypeSpot}, "spot/us-east-1a"},
		{cloudprovider.Offering{Zone: "us-east-1b", CapacityType: v1.CapacityTypeOnDemand, Price: 3}, "on-demand/us-east-1b"},
		{cloudprovider.Offering{Zone: "us-east-1a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-0123"}, "reserved/us-east-1a/cr-0123"},
		{cloudprovider.Offering{}, "/"},
	}
	for _, tc := range cases {
		if got := tc.offering.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestLaunchedPrice(t *testing.T) {
	it := test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8, Price: 1})
	it.Offerings = append(it.Offerings, &cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1", Price: 1e-7})
	nc := func(ct, reservation string) *v1.NodeClaim {
		n := &v1.NodeClaim{}
		n.Labels = map[string]string{v1.LabelInstanceType: "m.large", v1.LabelZone: "zone-a", v1.CapacityTypeLabelKey: ct}
		if reservation != "" {
			n.Labels[v1.LabelCapacityReservationID] = reservation
		}
		return n
	}
	for _, tc := range []struct {
		nc   *v1.NodeClaim
		want float64
		ok   bool
	}{
		{nc(v1.CapacityTypeOnDemand, ""), 1, true},
		{nc(v1.CapacityTypeSpot, ""), 0.4, true},
		{nc(v1.CapacityTypeReserved, "cr-1"), 1e-7, true},
		{&v1.NodeClaim{}, 0, false},
	} {
		got, ok := cloudprovider.LaunchedPrice(tc.nc, []*cloudprovider.InstanceType{it})
		if ok != tc.ok || got != tc.want {
			t.Errorf("LaunchedPrice(%v) = %v, %v; want %v, %v", tc.nc.Labels, got, ok, tc.want, tc.ok)
		}
	}
}
