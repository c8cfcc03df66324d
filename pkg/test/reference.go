package test

import (
	"fmt"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// ReferenceInstanceTypes is the public Karpenter scheduling benchmark's
// catalog (../shared/design/benchmark-workload.md): 400 types, i+1 cores,
// 2(i+1) GiB, 10(i+1) pods, spot in two zones and on-demand in three,
// every offering at 0.1·cores + 0.1·GB per hour. The solver's benchmarks
// and consolidation's quality test share it.
func ReferenceInstanceTypes() []*cloudprovider.InstanceType {
	its := make([]*cloudprovider.InstanceType, 400)
	for i := range 400 {
		cores := int64(i + 1)
		price := 0.1*float64(cores) + 0.1*float64(2*cores<<30)/1e9
		var offerings cloudprovider.Offerings
		for _, z := range []string{"zone-1", "zone-2"} {
			offerings = append(offerings, &cloudprovider.Offering{Zone: z, CapacityType: v1.CapacityTypeSpot, Price: price, Available: cloudprovider.Unlimited})
		}
		for _, z := range []string{"zone-1", "zone-2", "zone-3"} {
			offerings = append(offerings, &cloudprovider.Offering{Zone: z, CapacityType: v1.CapacityTypeOnDemand, Price: price, Available: cloudprovider.Unlimited})
		}
		its[i] = InstanceType(InstanceTypeOptions{
			Name: fmt.Sprintf("type-%d", i), CPU: cores, Memory: 2 * cores, Pods: 10 * cores, Family: "ref", Offerings: offerings,
		})
	}
	return its
}
