package provisioning_test

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// catalogRegion and catalogZones are where the realistic workload runs.
const catalogRegion = "us-east-1"

var catalogZones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// catalogInstanceTypes is the simulated cloud's real catalog as it offers
// it: every type priced in the region, on-demand and spot in each zone
// (as pkg/cloudprovider/sim does), so max pods per type, overheads that
// grow with size and prices that are not linear in resources all count.
func catalogInstanceTypes() []*cloudprovider.InstanceType {
	types, err := catalog.Load()
	if err != nil {
		panic(err)
	}
	out := make([]*cloudprovider.InstanceType, 0, len(types))
	for _, ct := range types {
		od, ok := ct.OnDemandPrice(catalogRegion)
		if !ok {
			continue
		}
		spot, _ := ct.SpotPrice(catalogRegion)
		it := ct.CloudInstanceType(catalogRegion)
		for _, z := range catalogZones {
			it.Offerings = append(it.Offerings,
				&cloudprovider.Offering{Zone: z, CapacityType: v1.CapacityTypeOnDemand, Price: od, Available: cloudprovider.Unlimited},
				&cloudprovider.Offering{Zone: z, CapacityType: v1.CapacityTypeSpot, Price: spot, Available: cloudprovider.Unlimited},
			)
		}
		it.Requirements.Add(
			scheduling.NewRequirement(v1.LabelZone, corev1.NodeSelectorOpIn, catalogZones...),
			scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand),
		)
		out = append(out, it)
	}
	return out
}

// catalogWorkload is the reference workload's pods over the realistic
// catalog.
func catalogWorkload(n int, seed uint64) provisioning.Input {
	in := referenceWorkload(n, seed)
	in.InstanceTypes = map[string][]*cloudprovider.InstanceType{"default": catalogInstanceTypes()}
	return in
}
