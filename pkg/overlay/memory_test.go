package overlay_test

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/overlay"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The bound docs/overlay.md states: the instance types held with the 50
// overlays applied take under 10% more heap than without them.
const maxOverhead = 0.10

type classes struct{}

func (classes) SimNodeClass(context.Context, string) (*simv1alpha1.SimNodeClass, error) {
	return &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, nil
}

// scale is the measured setting: the simulated AWS cloud's catalog (its
// instance types, grown to 400 by renamed copies, on-demand and spot in the default profile's 3
// zones, with the labels the AWS provider sets), 5 NodePools on one
// NodeClass, and 50 broad overlays as users write them
// (docs/overlay.md): a Savings Plan on every on-demand offering, older
// generations made dearer on every offering, hugepages on whole
// categories, a licence surcharge on the on-demand offerings of 22
// families and reserved-instance discounts on 23 instance types.
func scale(tb testing.TB) ([]v1.NodePool, map[string][]*cloudprovider.InstanceType, []v1alpha1.NodeOverlay) {
	tb.Helper()
	cat, err := catalog.Load()
	if err != nil {
		tb.Fatal(err)
	}
	profile, err := sim.DefaultProfile()
	if err != nil {
		tb.Fatal(err)
	}
	cloud, err := sim.New(sim.Options{Profile: profile, Catalog: cat, Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), NodeClasses: classes{}})
	if err != nil {
		tb.Fatal(err)
	}
	var pools []v1.NodePool
	for i := range 5 {
		pools = append(pools, *test.NodePool(func(np *v1.NodePool) { np.Name = fmt.Sprintf("pool-%d", i) }))
	}
	its, _, err := cloudprovider.InstanceTypesByNodePool(context.Background(), cloud, pools)
	if err != nil {
		tb.Fatal(err)
	}
	all := grow(its[pools[0].Name], 400)
	families := map[string]bool{}
	for _, pool := range pools {
		its[pool.Name] = all
	}
	var overlays []v1alpha1.NodeOverlay
	add := func(name string, weight int32, reqs []v1alpha1.NodeSelectorRequirement, f func(*v1alpha1.NodeOverlaySpec)) {
		o := v1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.NodeOverlaySpec{Requirements: reqs}}
		if weight > 0 {
			o.Spec.Weight = ptr.To(weight)
		}
		f(&o.Spec)
		overlays = append(overlays, o)
	}
	in := func(key string, values ...string) v1alpha1.NodeSelectorRequirement {
		return v1alpha1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
	}
	add("savings-plan", 0, []v1alpha1.NodeSelectorRequirement{in(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)}, func(s *v1alpha1.NodeOverlaySpec) { s.PriceAdjustment = ptr.To("-10%") })
	for _, category := range []string{"c", "m", "r"} {
		add("hugepages-"+category, 0, []v1alpha1.NodeSelectorRequirement{in(v1.LabelInstanceCategory, category)}, func(s *v1alpha1.NodeOverlaySpec) {
			s.Capacity = corev1.ResourceList{"hugepages-2Mi": resource.MustParse("100Mi")}
		})
	}
	add("newer-generations", 1, []v1alpha1.NodeSelectorRequirement{{Key: v1.LabelInstanceGeneration, Operator: corev1.NodeSelectorOpLt, Values: []string{"6"}}},
		func(s *v1alpha1.NodeOverlaySpec) { s.PriceAdjustment = ptr.To("+5%") })
	for _, it := range all {
		family := it.Requirements.Get(v1.LabelInstanceFamily).Any()
		if !families[family] && len(families) < 22 {
			families[family] = true
			add("licence-"+family, 10, []v1alpha1.NodeSelectorRequirement{in(v1.LabelInstanceFamily, family), in(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)},
				func(s *v1alpha1.NodeOverlaySpec) { s.PriceAdjustment = ptr.To("+0.02") })
		}
	}
	for i := 0; len(overlays) < 50; i++ {
		add("reserved-"+all[i*7].Name, 20, []v1alpha1.NodeSelectorRequirement{in(v1.LabelInstanceType, all[i*7].Name), in(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)},
			func(s *v1alpha1.NodeOverlaySpec) { s.PriceAdjustment = ptr.To("-30%") })
	}
	return pools, its, overlays
}

// grow repeats the catalog's instance types under new names, each copy
// its own values as a cloud's answer would be, until there are n.
func grow(its []*cloudprovider.InstanceType, n int) []*cloudprovider.InstanceType {
	out := make([]*cloudprovider.InstanceType, 0, n)
	for i := 0; len(out) < n; i++ {
		it := its[i%len(its)]
		name := it.Name
		if i >= len(its) {
			name = fmt.Sprintf("%s-%d", it.Name, i/len(its))
		}
		reqs := scheduling.NewRequirements()
		for key, r := range it.Requirements {
			values := r.Values()
			if key == v1.LabelInstanceType {
				values = []string{name}
			}
			reqs.Add(scheduling.NewRequirement(key, r.Operator(), values...))
		}
		offerings := make(cloudprovider.Offerings, len(it.Offerings))
		for j, of := range it.Offerings {
			c := *of
			offerings[j] = &c
		}
		out = append(out, &cloudprovider.InstanceType{Name: name, Requirements: reqs, Capacity: maps.Clone(it.Capacity),
			Overhead: cloudprovider.Overhead{KubeReserved: maps.Clone(it.Overhead.KubeReserved), SystemReserved: maps.Clone(it.Overhead.SystemReserved),
				EvictionThreshold: maps.Clone(it.Overhead.EvictionThreshold)}, Offerings: offerings})
	}
	return out
}

// heap is the live heap after a collection.
func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// overhead measures the heap the instance types take (from the cloud)
// and what applying the overlays adds while both are held.
func overhead(tb testing.TB) (base, extra uint64, res overlay.Result) {
	tb.Helper()
	start := heap()
	pools, its, overlays := scale(tb)
	held := heap()
	res = overlay.Apply(pools, its, overlays)
	after := heap()
	runtime.KeepAlive(its)
	runtime.KeepAlive(overlays)
	return held - start, after - held, res
}

func TestMemoryOverheadIsBounded(t *testing.T) {
	base, extra, res := overhead(t)
	for name, v := range res.Verdicts {
		if v.Code != overlay.Valid {
			t.Fatalf("overlay %s: %+v", name, v)
		}
	}
	ratio := float64(extra) / float64(base)
	t.Logf("instance types %d KiB, with 50 overlays +%d KiB (%.1f%%)", base>>10, extra>>10, 100*ratio)
	if ratio >= maxOverhead {
		t.Errorf("the overlays add %.1f%% to the instance types' heap, want under %.0f%%", 100*ratio, 100*maxOverhead)
	}
	runtime.KeepAlive(res)
}

// BenchmarkApply measures one application at scale (allocations per
// call) and reports the held heap with and without the overlays.
func BenchmarkApply(b *testing.B) {
	base, extra, res := overhead(b)
	runtime.KeepAlive(res)
	pools, its, overlays := scale(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		overlay.Apply(pools, its, overlays)
	}
	b.ReportMetric(float64(base)/1024, "base-KiB")
	b.ReportMetric(float64(extra)/1024, "overlay-KiB")
	b.ReportMetric(100*float64(extra)/float64(base), "overhead-%")
}
