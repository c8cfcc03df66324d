package catalog

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// CloudInstanceType is t as a provider offers it in region, without
// offerings: its labels as requirements, its resources and the node's
// overhead. Every provider that describes machines this way (the
// simulated cloud from the catalog, AWS from DescribeInstanceTypes) gets
// the same shape, so the solver sees them alike.
func (t InstanceType) CloudInstanceType(region string) *cloudprovider.InstanceType {
	reqs := scheduling.Requirements{}
	labels := t.Labels()
	for k, v := range labels {
		reqs.Add(scheduling.NewRequirement(k, corev1.NodeSelectorOpIn, v))
	}
	// A label the type has no value for (a GPU's on a CPU type, the
	// hypervisor the catalog does not record) is required absent, so a
	// requirement on it excludes the type rather than passing unchecked.
	for _, k := range scheduling.InstanceTypeLabels() {
		if _, ok := labels[k]; !ok {
			reqs.Add(scheduling.NewRequirement(k, corev1.NodeSelectorOpDoesNotExist))
		}
	}
	reqs.Add(scheduling.NewRequirement(v1.LabelRegion, corev1.NodeSelectorOpIn, region))
	return &cloudprovider.InstanceType{Name: t.Name, Requirements: reqs, Capacity: t.capacity(), Overhead: t.overhead()}
}

func (t InstanceType) capacity() corev1.ResourceList {
	rl := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(t.VCPU), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(t.MemoryMiB<<20, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(t.MaxPods), resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
	}
	if t.GPUCount > 0 {
		rl["nvidia.com/gpu"] = *resource.NewQuantity(int64(t.GPUCount), resource.DecimalSI)
	}
	return rl
}

// overhead follows the common managed-Kubernetes formula: CPU reserved at
// 6% of the first core, 1% of the second, 0.5% of the next two and 0.25%
// beyond; memory 11 MiB per pod plus 255 MiB; eviction at 100 MiB free.
func (t InstanceType) overhead() cloudprovider.Overhead {
	milli := 0.0
	for core := 1; core <= t.VCPU; core++ {
		switch {
		case core == 1:
			milli += 60
		case core == 2:
			milli += 10
		case core <= 4:
			milli += 5
		default:
			milli += 2.5
		}
	}
	return cloudprovider.Overhead{
		KubeReserved: corev1.ResourceList{
			corev1.ResourceCPU:              *resource.NewMilliQuantity(int64(math.Ceil(milli)), resource.DecimalSI),
			corev1.ResourceMemory:           *resource.NewQuantity(int64(11*t.MaxPods+255)<<20, resource.BinarySI),
			corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
		},
		EvictionThreshold: corev1.ResourceList{
			corev1.ResourceMemory:           resource.MustParse("100Mi"),
			corev1.ResourceEphemeralStorage: resource.MustParse("2Gi"),
		},
	}
}
