package provisioning_test

import (
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/test"
)

func priced(name string, cpu, memGi int64, price float64) *cloudprovider.InstanceType {
	return test.InstanceType(test.InstanceTypeOptions{Name: name, CPU: cpu, Memory: memGi, Overhead: corev1.ResourceList{},
		Offerings: cloudprovider.Offerings{{Zone: "z", CapacityType: v1.CapacityTypeOnDemand, Price: price, Available: cloudprovider.Unlimited}}})
}

func TestLowerBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		pods []*corev1.Pod
		its  []*cloudprovider.InstanceType
		want float64
	}{
		{"one type, cpu-bound: 3 cores of 4-core nodes at $1", pods(3, "1", "1Gi"), []*cloudprovider.InstanceType{priced("a", 4, 16, 1)}, 0.75},
		{"one type, memory-bound", pods(2, "100m", "8Gi"), []*cloudprovider.InstanceType{priced("a", 4, 8, 1)}, 2},
		// 4 cores and 4 GiB: a = 4 cores/1 GiB $1, b = 1 core/4 GiB $1:
		// x·a + y·b with 4x + y = 4 and x + 4y = 4 → x = y = 0.8 → $1.6,
		// cheaper than either alone ($4).
		{"a pair beats either type", pods(4, "1", "1Gi"), []*cloudprovider.InstanceType{priced("a", 4, 1, 1), priced("b", 1, 4, 1)}, 1.6},
		{"the cheaper per unit wins", pods(8, "1", "1Gi"), []*cloudprovider.InstanceType{priced("a", 4, 16, 1), priced("b", 8, 32, 1.5)}, 1.5},
		{"no pods", nil, []*cloudprovider.InstanceType{priced("a", 4, 16, 1)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := provisioning.LowerBound(tc.pods, tc.its); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("LowerBound = %v, want %v", got, tc.want)
			}
		})
	}
}

// In the reference catalog price is linear in cores (2 GiB per core), so
// the bound has a closed form: the larger of total cores and total GiB/2,
// each core of allocatable costing the per-core price of the largest type
// (its fixed 100m overhead weighs least).
func TestLowerBoundReferenceCatalogClosedForm(t *testing.T) {
	its := test.ReferenceInstanceTypes()
	in := referenceWorkload(1000, 1)
	var cpu, mem float64
	for _, p := range in.Pods {
		cpu += float64(p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()) / 1000
		mem += float64(p.Spec.Containers[0].Resources.Requests.Memory().Value())
	}
	largest := its[len(its)-1]
	alloc := largest.Allocatable()
	perCore := largest.Offerings.Cheapest().Price / (float64(alloc.Cpu().MilliValue()) / 1000)
	perByte := largest.Offerings.Cheapest().Price / float64(alloc.Memory().Value())
	want := math.Max(cpu*perCore, mem*perByte)
	if got := provisioning.LowerBound(in.Pods, its); math.Abs(got-want)/want > 1e-9 {
		t.Errorf("LowerBound = %v, closed form %v", got, want)
	}
}
