package test

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// InstanceTypeOptions describe an instance type for tests.
type InstanceTypeOptions struct {
	Name   string
	CPU    int64 // cores
	Memory int64 // GiB
	Pods   int64
	// Arch defaults to amd64; Family to the name's prefix.
	Arch   string
	Family string
	// Extended resources, e.g. nvidia.com/gpu.
	Extended corev1.ResourceList
	// Offerings default to on-demand and spot in zone-a and zone-b.
	Offerings cloudprovider.Offerings
	// Price is the on-demand price; spot costs 40% of it.
	Price float64
	// Overhead is kube-reserved; defaults to 100m CPU and 10Mi memory.
	Overhead corev1.ResourceList
	// Labels are extra labels the type carries.
	Labels map[string]string
}

// InstanceType builds an instance type whose requirements carry the
// well-known labels, every offering's zone and capacity type.
func InstanceType(o InstanceTypeOptions) *cloudprovider.InstanceType {
	if o.Arch == "" {
		o.Arch = "amd64"
	}
	if o.Pods == 0 {
		o.Pods = 110
	}
	if o.Price == 0 {
		o.Price = 0.05*float64(o.CPU) + 0.01*float64(o.Memory)
	}
	if o.Family == "" {
		o.Family = o.Name
		for i, c := range o.Name {
			if c == '.' {
				o.Family = o.Name[:i]
				break
			}
		}
	}
	if o.Offerings == nil {
		for _, zone := range []string{"zone-a", "zone-b"} {
			o.Offerings = append(o.Offerings,
				&cloudprovider.Offering{Zone: zone, CapacityType: v1.CapacityTypeOnDemand, Price: o.Price, Available: cloudprovider.Unlimited},
				&cloudprovider.Offering{Zone: zone, CapacityType: v1.CapacityTypeSpot, Price: o.Price * 0.4, Available: cloudprovider.Unlimited},
			)
		}
	}
	if o.Overhead == nil {
		o.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("10Mi")}
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(o.CPU, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(o.Memory<<30, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(o.Pods, resource.DecimalSI),
	}
	for k, v := range o.Extended {
		capacity[k] = v
	}
	zones, capacityTypes := map[string]bool{}, map[string]bool{}
	for _, of := range o.Offerings {
		zones[of.Zone] = true
		capacityTypes[of.CapacityType] = true
	}
	reqs := scheduling.NewRequirements(
		scheduling.NewRequirement(v1.LabelInstanceType, corev1.NodeSelectorOpIn, o.Name),
		scheduling.NewRequirement(v1.LabelArch, corev1.NodeSelectorOpIn, o.Arch),
		scheduling.NewRequirement(v1.LabelOS, corev1.NodeSelectorOpIn, "linux"),
		scheduling.NewRequirement(v1.LabelInstanceFamily, corev1.NodeSelectorOpIn, o.Family),
		scheduling.NewRequirement(v1.LabelInstanceCPU, corev1.NodeSelectorOpIn, strconv.FormatInt(o.CPU, 10)),
		scheduling.NewRequirement(v1.LabelZone, corev1.NodeSelectorOpIn, keys(zones)...),
		scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, keys(capacityTypes)...),
	)
	for k, v := range o.Labels {
		reqs.Add(scheduling.NewRequirement(k, corev1.NodeSelectorOpIn, v))
	}
	return &cloudprovider.InstanceType{
		Name:         o.Name,
		Requirements: reqs,
		Capacity:     capacity,
		Overhead:     cloudprovider.Overhead{KubeReserved: o.Overhead},
		Offerings:    o.Offerings,
	}
}

// InstanceTypeSeries builds n instance types "<prefix>.<i>" with i+1 cores
// and 2(i+1) GiB each, priced linearly.
func InstanceTypeSeries(prefix string, n int) []*cloudprovider.InstanceType {
	its := make([]*cloudprovider.InstanceType, n)
	for i := range n {
		its[i] = InstanceType(InstanceTypeOptions{Name: fmt.Sprintf("%s.%d", prefix, i+1), CPU: int64(i + 1), Memory: 2 * int64(i+1), Family: prefix})
	}
	return its
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
