package overlay_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/overlay"
	"github.com/capstan-dev/capstan/pkg/test"
)

func nodePool(name string, labels map[string]string) v1.NodePool {
	np := v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Template.ObjectMeta.Labels = labels
	return np
}

type spec struct {
	name          string
	weight        int32
	reqs          []v1alpha1.NodeSelectorRequirement
	price, adjust string
	capacity      corev1.ResourceList
}

func (s spec) overlay() v1alpha1.NodeOverlay {
	o := v1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: s.name}, Spec: v1alpha1.NodeOverlaySpec{Requirements: s.reqs, Capacity: s.capacity}}
	if s.weight != 0 {
		o.Spec.Weight = ptr.To(s.weight)
	}
	if s.price != "" {
		o.Spec.Price = ptr.To(s.price)
	}
	if s.adjust != "" {
		o.Spec.PriceAdjustment = ptr.To(s.adjust)
	}
	return o
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) v1alpha1.NodeSelectorRequirement {
	return v1alpha1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func fuse(n string) corev1.ResourceList {
	return corev1.ResourceList{"smarter-devices/fuse": resource.MustParse(n)}
}

// twoTypes: m5.large (amd64, on-demand 1.00) and m6g.large (arm64,
// on-demand 2.00), each on-demand and spot (40%) in zone-a and zone-b.
func twoTypes() []*cloudprovider.InstanceType {
	return []*cloudprovider.InstanceType{
		test.InstanceType(test.InstanceTypeOptions{Name: "m5.large", CPU: 2, Memory: 8, Price: 1}),
		test.InstanceType(test.InstanceTypeOptions{Name: "m6g.large", CPU: 2, Memory: 8, Price: 2, Arch: "arm64"}),
	}
}

// summary is what a test compares: per NodePool and instance type, each
// offering's price ("zone/capacity-type") and the extended resources.
func summary(its map[string][]*cloudprovider.InstanceType) map[string]map[string]string {
	out := map[string]map[string]string{}
	for pool, types := range its {
		out[pool] = map[string]string{}
		for _, it := range types {
			var parts []string
			for _, of := range it.Offerings {
				parts = append(parts, fmt.Sprintf("%s/%s=%.3f", of.Zone, of.CapacityType, of.Price))
			}
			for _, name := range slices.Sorted(maps.Keys(it.Capacity)) {
				if !strings.Contains(string(name), "/") && !strings.HasPrefix(string(name), "hugepages") {
					continue
				}
				q := it.Capacity[name]
				parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
			}
			out[pool][it.Name] = strings.Join(parts, " ")
		}
	}
	return out
}

const (
	m5     = "zone-a/on-demand=1.000 zone-a/spot=0.400 zone-b/on-demand=1.000 zone-b/spot=0.400"
	m6g    = "zone-a/on-demand=2.000 zone-a/spot=0.800 zone-b/on-demand=2.000 zone-b/spot=0.800"
	m5fuse = m5 + " smarter-devices/fuse="
)

// Expectations from the reference's tests (kubernetes-sigs/karpenter
// v1.14.1 pkg/controllers/nodeoverlay/suite_test.go, the It named in each
// case) and design (designs/node-overlay.md).
func TestApply(t *testing.T) {
	arm := req(v1.LabelArch, corev1.NodeSelectorOpIn, "arm64")
	m5Only := req(v1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large")
	onDemand := req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeOnDemand)
	for _, tc := range []struct {
		name     string
		pools    []v1.NodePool
		overlays []spec
		want     map[string]map[string]string
		verdicts map[string]overlay.Code
	}{
		{name: "should return the same instance type when zero overlay are applied",
			want: map[string]map[string]string{"default": {"m5.large": m5, "m6g.large": m6g}}},
		{name: "design: priceAdjustment -10% on on-demand (a Savings Plan)",
			overlays: []spec{{name: "savings", reqs: []v1alpha1.NodeSelectorRequirement{onDemand}, adjust: "-10%"}},
			want: map[string]map[string]string{"default": {
				"m5.large":  "zone-a/on-demand=0.900 zone-a/spot=0.400 zone-b/on-demand=0.900 zone-b/spot=0.400",
				"m6g.large": "zone-a/on-demand=1.800 zone-a/spot=0.800 zone-b/on-demand=1.800 zone-b/spot=0.800"}},
			verdicts: map[string]overlay.Code{"savings": overlay.Valid}},
		{name: "design: price replaces the price of the selected offerings",
			overlays: []spec{{name: "price", reqs: []v1alpha1.NodeSelectorRequirement{m5Only, req(v1.LabelZone, corev1.NodeSelectorOpIn, "zone-b")}, price: "5.00"}},
			want: map[string]map[string]string{"default": {
				"m5.large":  "zone-a/on-demand=1.000 zone-a/spot=0.400 zone-b/on-demand=5.000 zone-b/spot=5.000",
				"m6g.large": m6g}},
			verdicts: map[string]overlay.Code{"price": overlay.Valid}},
		{name: "design: +5.00 adds, -7.50 never goes below zero",
			overlays: []spec{{name: "up", reqs: []v1alpha1.NodeSelectorRequirement{m5Only}, adjust: "+5.00"}, {name: "down", reqs: []v1alpha1.NodeSelectorRequirement{arm}, adjust: "-7.50"}},
			want: map[string]map[string]string{"default": {
				"m5.large":  "zone-a/on-demand=6.000 zone-a/spot=5.400 zone-b/on-demand=6.000 zone-b/spot=5.400",
				"m6g.large": "zone-a/on-demand=0.000 zone-a/spot=0.000 zone-b/on-demand=0.000 zone-b/spot=0.000"}},
			verdicts: map[string]overlay.Code{"up": overlay.Valid, "down": overlay.Valid}},
		{name: "should fail when requirements overlays overlap (equal weight: the later name wins, the other conflicts)",
			overlays: []spec{{name: "overlay-a", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{arm}, price: "1.03"},
				{name: "overlay-b", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpExists)}, price: "23"}},
			want: map[string]map[string]string{"default": {
				"m5.large":  "zone-a/on-demand=23.000 zone-a/spot=23.000 zone-b/on-demand=23.000 zone-b/spot=23.000",
				"m6g.large": "zone-a/on-demand=23.000 zone-a/spot=23.000 zone-b/on-demand=23.000 zone-b/spot=23.000"}},
			verdicts: map[string]overlay.Code{"overlay-a": overlay.Conflicting, "overlay-b": overlay.Valid}},
		{name: "should succeed with requirements overlays don't overlap",
			overlays: []spec{{name: "overlay-a", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{arm}, price: "1.03"},
				{name: "overlay-b", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{m5Only}, price: "23"}},
			want: map[string]map[string]string{"default": {
				"m5.large":  "zone-a/on-demand=23.000 zone-a/spot=23.000 zone-b/on-demand=23.000 zone-b/spot=23.000",
				"m6g.large": "zone-a/on-demand=1.030 zone-a/spot=1.030 zone-b/on-demand=1.030 zone-b/spot=1.030"}},
			verdicts: map[string]overlay.Code{"overlay-a": overlay.Valid, "overlay-b": overlay.Valid}},
		{name: "should fail with requirements overlays overlap on zone",
			overlays: []spec{{name: "overlay-a", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{req(v1.LabelZone, corev1.NodeSelectorOpIn, "zone-a")}, adjust: "+1"},
				{name: "overlay-b", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{req(v1.LabelZone, corev1.NodeSelectorOpIn, "zone-a", "zone-b"), m5Only}, adjust: "+2"}},
			want: map[string]map[string]string{"default": {
				"m5.large":  "zone-a/on-demand=3.000 zone-a/spot=2.400 zone-b/on-demand=3.000 zone-b/spot=2.400",
				"m6g.large": m6g}},
			verdicts: map[string]overlay.Code{"overlay-a": overlay.Conflicting, "overlay-b": overlay.Valid}},
		{name: "should succeed with requirements overlays don't overlap on capacity type",
			overlays: []spec{{name: "overlay-a", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{onDemand, m5Only}, adjust: "+1"},
				{name: "overlay-b", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot), m5Only}, adjust: "+2"}},
			want: map[string]map[string]string{"default": {
				"m5.large":  "zone-a/on-demand=2.000 zone-a/spot=2.400 zone-b/on-demand=2.000 zone-b/spot=2.400",
				"m6g.large": m6g}},
			verdicts: map[string]overlay.Code{"overlay-a": overlay.Valid, "overlay-b": overlay.Valid}},
		{name: "should apply higher weight overlay when multiple overlays match the same instance type",
			overlays: []spec{{name: "overlay-a", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{m5Only}, capacity: fuse("5")},
				{name: "overlay-b", weight: 20, reqs: []v1alpha1.NodeSelectorRequirement{m5Only}, capacity: fuse("99")}},
			want:     map[string]map[string]string{"default": {"m5.large": m5fuse + "99", "m6g.large": m6g}},
			verdicts: map[string]overlay.Code{"overlay-a": overlay.Valid, "overlay-b": overlay.Valid}},
		{name: "should fail with conflicting capacity overlays with overlapping requirements",
			overlays: []spec{{name: "overlay-a", reqs: []v1alpha1.NodeSelectorRequirement{m5Only}, capacity: fuse("5")},
				{name: "overlay-b", reqs: []v1alpha1.NodeSelectorRequirement{}, capacity: fuse("99")}},
			want:     map[string]map[string]string{"default": {"m5.large": m5fuse + "99", "m6g.large": m6g + " smarter-devices/fuse=99"}},
			verdicts: map[string]overlay.Code{"overlay-a": overlay.Conflicting, "overlay-b": overlay.Valid}},
		{name: "should apply pricing and capacity adjustment from two overlays on the same instance type",
			overlays: []spec{{name: "price", reqs: []v1alpha1.NodeSelectorRequirement{m5Only}, price: "0.5"},
				{name: "capacity", reqs: []v1alpha1.NodeSelectorRequirement{m5Only}, capacity: corev1.ResourceList{"hugepages-1Gi": resource.MustParse("2Gi")}}},
			want: map[string]map[string]string{"default": {
				"m5.large":  "zone-a/on-demand=0.500 zone-a/spot=0.500 zone-b/on-demand=0.500 zone-b/spot=0.500 hugepages-1Gi=2Gi",
				"m6g.large": m6g}},
			verdicts: map[string]overlay.Code{"price": overlay.Valid, "capacity": overlay.Valid}},
		{name: "should that there is not a partial application for instance types",
			overlays: []spec{{name: "overlay-b", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{m5Only}, capacity: fuse("1")},
				{name: "overlay-a", weight: 10, reqs: []v1alpha1.NodeSelectorRequirement{}, capacity: fuse("2")}},
			want:     map[string]map[string]string{"default": {"m5.large": m5fuse + "1", "m6g.large": m6g}},
			verdicts: map[string]overlay.Code{"overlay-a": overlay.Conflicting, "overlay-b": overlay.Valid}},
		{name: "should only apply override for nodepool that defined in the overlay requirements",
			pools:    []v1.NodePool{nodePool("default", nil), nodePool("other", nil)},
			overlays: []spec{{name: "pool", reqs: []v1alpha1.NodeSelectorRequirement{req(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, "other"), m5Only}, capacity: fuse("1")}},
			want:     map[string]map[string]string{"default": {"m5.large": m5, "m6g.large": m6g}, "other": {"m5.large": m5fuse + "1", "m6g.large": m6g}},
			verdicts: map[string]overlay.Code{"pool": overlay.Valid}},
		{name: "should only apply price adjustments for nodeclaim spec labels that defined in the overlay requirements",
			pools:    []v1.NodePool{nodePool("default", nil), nodePool("ml", map[string]string{"example.com/team": "ml"})},
			overlays: []spec{{name: "team", reqs: []v1alpha1.NodeSelectorRequirement{req("example.com/team", corev1.NodeSelectorOpIn, "ml"), m5Only}, price: "3"}},
			want: map[string]map[string]string{"default": {"m5.large": m5, "m6g.large": m6g},
				"ml": {"m5.large": "zone-a/on-demand=3.000 zone-a/spot=3.000 zone-b/on-demand=3.000 zone-b/spot=3.000", "m6g.large": m6g}},
			verdicts: map[string]overlay.Code{"team": overlay.Valid}},
		{name: "a label nobody defines selects nothing with In, everything with NotIn",
			overlays: []spec{{name: "in", reqs: []v1alpha1.NodeSelectorRequirement{req("example.com/x", corev1.NodeSelectorOpIn, "y")}, price: "9"},
				{name: "notin", reqs: []v1alpha1.NodeSelectorRequirement{req("example.com/x", corev1.NodeSelectorOpNotIn, "y"), arm}, price: "7"}},
			want: map[string]map[string]string{"default": {"m5.large": m5,
				"m6g.large": "zone-a/on-demand=7.000 zone-a/spot=7.000 zone-b/on-demand=7.000 zone-b/spot=7.000"}},
			verdicts: map[string]overlay.Code{"in": overlay.Valid, "notin": overlay.Valid}},
		{name: "should not apply capacity adjustments for invalid overlay",
			overlays: []spec{{name: "invalid", reqs: []v1alpha1.NodeSelectorRequirement{}, capacity: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}},
			want:     map[string]map[string]string{"default": {"m5.large": m5, "m6g.large": m6g}},
			verdicts: map[string]overlay.Code{"invalid": overlay.Invalid}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pools := tc.pools
			if pools == nil {
				pools = []v1.NodePool{nodePool("default", nil)}
			}
			its := twoTypes()
			byPool := map[string][]*cloudprovider.InstanceType{}
			for _, np := range pools {
				byPool[np.Name] = its
			}
			before := summary(byPool)
			var overlays []v1alpha1.NodeOverlay
			for _, s := range tc.overlays {
				overlays = append(overlays, s.overlay())
			}
			res := overlay.Apply(pools, byPool, overlays)
			if diff := cmp.Diff(tc.want, summary(res.InstanceTypes)); diff != "" {
				t.Errorf("instance types (-want +got):\n%s", diff)
			}
			got := map[string]overlay.Code{}
			for name, v := range res.Verdicts {
				got[name] = v.Code
			}
			if diff := cmp.Diff(tc.verdicts, got, cmpEmpty); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, summary(byPool)); diff != "" {
				t.Errorf("the cloud's instance types changed (-before +after):\n%s", diff)
			}
		})
	}
}

var cmpEmpty = cmp.Comparer(func(a, b map[string]overlay.Code) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })

// A conflict names the overlay it conflicts with, as the design's
// example status does ("conflict with overlay capacity-1").
func TestConflictNamesTheOtherOverlay(t *testing.T) {
	pools := []v1.NodePool{nodePool("default", nil)}
	res := overlay.Apply(pools, map[string][]*cloudprovider.InstanceType{"default": twoTypes()}, []v1alpha1.NodeOverlay{
		spec{name: "memory-1", weight: 90, reqs: []v1alpha1.NodeSelectorRequirement{}, capacity: fuse("1")}.overlay(),
		spec{name: "capacity-1", weight: 90, reqs: []v1alpha1.NodeSelectorRequirement{req(v1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large")}, capacity: fuse("2")}.overlay(),
	})
	v := res.Verdicts["capacity-1"]
	if v.Code != overlay.Conflicting || !strings.Contains(v.Message, "conflict with NodeOverlay memory-1") {
		t.Errorf("verdict of capacity-1 = %+v, want a conflict with memory-1", v)
	}
}

// Unchanged instance types, offerings, requirements and NodePools'
// slices are shared, not copied; NodePools adjusted alike share one
// slice.
func TestApplySharesWhatDidNotChange(t *testing.T) {
	its := twoTypes()
	pools := []v1.NodePool{nodePool("a", nil), nodePool("b", nil), nodePool("c", nil)}
	byPool := map[string][]*cloudprovider.InstanceType{"a": its, "b": its, "c": its}
	res := overlay.Apply(pools, byPool, []v1alpha1.NodeOverlay{
		spec{name: "spot", reqs: []v1alpha1.NodeSelectorRequirement{req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot), req(v1.LabelArch, corev1.NodeSelectorOpIn, "arm64")}, adjust: "-5%"}.overlay(),
		spec{name: "c", reqs: []v1alpha1.NodeSelectorRequirement{req(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, "c"), req(v1.LabelArch, corev1.NodeSelectorOpIn, "arm64")}, weight: 5, price: "1"}.overlay(),
	})
	a, b, c := res.InstanceTypes["a"], res.InstanceTypes["b"], res.InstanceTypes["c"]
	if &a[0] != &b[0] {
		t.Error("NodePools a and b, adjusted alike, do not share a slice")
	}
	if &a[0] == &its[0] || &c[0] == &a[0] {
		t.Error("adjusted NodePools share the cloud's slice or each other's")
	}
	if a[0] != its[0] || c[0] != its[0] {
		t.Error("m5.large, unchanged, was copied")
	}
	if a[1] == its[1] || a[1].Offerings[0] != its[1].Offerings[0] || a[1].Offerings[1] == its[1].Offerings[1] {
		t.Error("m6g.large: want a copy sharing its on-demand offerings and copying its spot ones")
	}
	if fmt.Sprintf("%p", a[1].Requirements) != fmt.Sprintf("%p", its[1].Requirements) || fmt.Sprintf("%p", a[1].Capacity) != fmt.Sprintf("%p", its[1].Capacity) {
		t.Error("m6g.large's requirements or capacity were copied though no overlay changed them")
	}
}
