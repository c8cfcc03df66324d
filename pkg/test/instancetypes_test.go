package test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// approx compares prices computed in floating point.
var approx = cmpopts.EquateApprox(0, 1e-9)

// inValues maps each key of reqs to its allowed values; every requirement
// the builder makes is In.
func inValues(t *testing.T, reqs scheduling.Requirements) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for key, r := range reqs {
		if r.Operator() != corev1.NodeSelectorOpIn {
			t.Errorf("requirement on %s is %s, want In", key, r.Operator())
		}
		out[key] = r.Values()
	}
	return out
}

func offeringSummaries(ofs cloudprovider.Offerings) []string {
	var out []string
	for _, o := range ofs {
		out = append(out, fmt.Sprintf("%s %.4f %d", o, o.Price, o.Available))
	}
	return out
}

func TestInstanceTypeDefaults(t *testing.T) {
	it := InstanceType(InstanceTypeOptions{Name: "m5.large", CPU: 2, Memory: 8})
	if it.Name != "m5.large" {
		t.Errorf("name %q", it.Name)
	}
	wantReqs := map[string][]string{
		v1.LabelInstanceType:    {"m5.large"},
		v1.LabelArch:            {"amd64"},
		v1.LabelOS:              {"linux"},
		v1.LabelInstanceFamily:  {"m5"},
		v1.LabelInstanceCPU:     {"2"},
		v1.LabelZone:            {"zone-a", "zone-b"},
		v1.CapacityTypeLabelKey: {v1.CapacityTypeOnDemand, v1.CapacityTypeSpot},
	}
	if diff := cmp.Diff(wantReqs, inValues(t, it.Requirements)); diff != "" {
		t.Errorf("requirements (-want +got):\n%s", diff)
	}
	wantCapacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("2"),
		corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	if diff := cmp.Diff(wantCapacity, it.Capacity, quantityEqual); diff != "" {
		t.Errorf("capacity (-want +got):\n%s", diff)
	}
	wantOverhead := cloudprovider.Overhead{KubeReserved: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100m"),
		corev1.ResourceMemory: resource.MustParse("10Mi"),
	}}
	if diff := cmp.Diff(wantOverhead, it.Overhead, quantityEqual); diff != "" {
		t.Errorf("overhead (-want +got):\n%s", diff)
	}
	// Price 0.05/core + 0.01/GiB = 0.18 on demand, 40% of it for spot.
	wantOfferings := []string{
		"on-demand/zone-a 0.1800 " + fmt.Sprint(cloudprovider.Unlimited),
		"spot/zone-a 0.0720 " + fmt.Sprint(cloudprovider.Unlimited),
		"on-demand/zone-b 0.1800 " + fmt.Sprint(cloudprovider.Unlimited),
		"spot/zone-b 0.0720 " + fmt.Sprint(cloudprovider.Unlimited),
	}
	if diff := cmp.Diff(wantOfferings, offeringSummaries(it.Offerings)); diff != "" {
		t.Errorf("offerings (-want +got):\n%s", diff)
	}
	for _, o := range it.Offerings {
		if !o.CompatibleWith(it.Requirements) {
			t.Errorf("offering %s is not compatible with the type's requirements %s", o, it.Requirements)
		}
	}
}

func TestInstanceTypeOptions(t *testing.T) {
	offerings := cloudprovider.Offerings{
		{Zone: "zone-c", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1", Price: 1e-8, Available: 2},
		{Zone: "zone-d", CapacityType: v1.CapacityTypeSpot, Price: 0.3, Available: 0},
		{Zone: "zone-c", CapacityType: v1.CapacityTypeSpot, Price: 0.2, Available: cloudprovider.Unlimited},
	}
	it := InstanceType(InstanceTypeOptions{
		Name:      "p4d.24xlarge",
		CPU:       96,
		Memory:    1152,
		Pods:      737,
		Arch:      "arm64",
		Family:    "p4",
		Extended:  corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")},
		Offerings: offerings,
		Price:     32,
		Overhead:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		Labels:    map[string]string{"example.com/accelerator": "a100", "team": "ml"},
	})
	wantReqs := map[string][]string{
		v1.LabelInstanceType:      {"p4d.24xlarge"},
		v1.LabelArch:              {"arm64"},
		v1.LabelOS:                {"linux"},
		v1.LabelInstanceFamily:    {"p4"},
		v1.LabelInstanceCPU:       {"96"},
		v1.LabelZone:              {"zone-c", "zone-d"},
		v1.CapacityTypeLabelKey:   {v1.CapacityTypeReserved, v1.CapacityTypeSpot},
		"example.com/accelerator": {"a100"},
		"team":                    {"ml"},
	}
	if diff := cmp.Diff(wantReqs, inValues(t, it.Requirements)); diff != "" {
		t.Errorf("requirements (-want +got):\n%s", diff)
	}
	wantCapacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("96"),
		corev1.ResourceMemory: resource.MustParse("1152Gi"),
		corev1.ResourcePods:   resource.MustParse("737"),
		"nvidia.com/gpu":      resource.MustParse("8"),
	}
	if diff := cmp.Diff(wantCapacity, it.Capacity, quantityEqual); diff != "" {
		t.Errorf("capacity (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}, it.Overhead.KubeReserved, quantityEqual); diff != "" {
		t.Errorf("overhead (-want +got):\n%s", diff)
	}
	// Given offerings are used as they are, prices included.
	if diff := cmp.Diff([]string{"reserved/zone-c/cr-1 0.0000 2", "spot/zone-d 0.3000 0", "spot/zone-c 0.2000 " + fmt.Sprint(cloudprovider.Unlimited)}, offeringSummaries(it.Offerings)); diff != "" {
		t.Errorf("offerings (-want +got):\n%s", diff)
	}
}

func TestInstanceTypeFamily(t *testing.T) {
	cases := []struct{ name, family, want string }{
		{name: "m5.large", want: "m5"},
		{name: "c7g.metal.48xl", want: "c7g"},
		{name: "standalone", want: "standalone"},
		{name: "m5.large", family: "general", want: "general"},
	}
	for _, tc := range cases {
		it := InstanceType(InstanceTypeOptions{Name: tc.name, Family: tc.family, CPU: 1, Memory: 1})
		if got := it.Requirements.Get(v1.LabelInstanceFamily).Values(); !cmp.Equal(got, []string{tc.want}) {
			t.Errorf("name %q family %q: family requirement %v, want [%s]", tc.name, tc.family, got, tc.want)
		}
	}
}

func TestInstanceTypePrices(t *testing.T) {
	cases := []struct {
		name         string
		opts         InstanceTypeOptions
		wantOnDemand float64
	}{
		{name: "defaulted from size", opts: InstanceTypeOptions{Name: "a", CPU: 4, Memory: 16}, wantOnDemand: 0.36},
		{name: "given", opts: InstanceTypeOptions{Name: "b", CPU: 4, Memory: 16, Price: 1.5}, wantOnDemand: 1.5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prices := map[string]float64{}
			for _, o := range InstanceType(tc.opts).Offerings {
				prices[o.CapacityType] = o.Price
			}
			want := map[string]float64{v1.CapacityTypeOnDemand: tc.wantOnDemand, v1.CapacityTypeSpot: 0.4 * tc.wantOnDemand}
			if diff := cmp.Diff(want, prices, approx); diff != "" {
				t.Errorf("prices by capacity type (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInstanceTypeSeries(t *testing.T) {
	if got := InstanceTypeSeries("s", 0); len(got) != 0 {
		t.Errorf("InstanceTypeSeries(s, 0) has %d types", len(got))
	}
	type size struct {
		Name           string
		Family         string
		CPU, MemoryGiB int64
		OnDemand       float64
	}
	var got []size
	for _, it := range InstanceTypeSeries("s", 3) {
		var onDemand float64
		for _, o := range it.Offerings {
			if o.CapacityType == v1.CapacityTypeOnDemand {
				onDemand = o.Price
			}
		}
		cpu, mem := it.Capacity[corev1.ResourceCPU], it.Capacity[corev1.ResourceMemory]
		got = append(got, size{
			Name:      it.Name,
			Family:    it.Requirements.Get(v1.LabelInstanceFamily).Values()[0],
			CPU:       cpu.Value(),
			MemoryGiB: mem.Value() >> 30,
			OnDemand:  onDemand,
		})
	}
	want := []size{
		{Name: "s.1", Family: "s", CPU: 1, MemoryGiB: 2, OnDemand: 0.07},
		{Name: "s.2", Family: "s", CPU: 2, MemoryGiB: 4, OnDemand: 0.14},
		{Name: "s.3", Family: "s", CPU: 3, MemoryGiB: 6, OnDemand: 0.21},
	}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}
