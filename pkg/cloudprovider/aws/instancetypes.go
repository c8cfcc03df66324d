package aws

import (
	"context"
	"maps"
	"slices"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// GetInstanceTypes implements CloudProvider: every instance type the
// region sells and the catalog prices, offered on-demand and (where sold)
// as spot in each zone of the NodeClass's subnets that sells it, plus one
// reserved offering per capacity reservation in the NodeClass's status
// (none free for an expiring capacity block), with the free slots last
// described less the launches since, at
// on-demand / 10^7 (decision 15). The NodeClass's AMI family, block
// devices, instance store policy and kubelet settings shape capacity and
// overhead (shape.go, overhead.go).
func (p *Provider) GetInstanceTypes(ctx context.Context, np *v1.NodePool) ([]*cloudprovider.InstanceType, error) {
	nc, err := p.nodeClass(ctx, np.Spec.Template.Spec.NodeClassRef)
	if err != nil {
		return nil, err
	}
	c, err := p.loadedCatalog(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.RLock()
	its := p.instanceTypes(c, nc)
	p.mu.RUnlock()
	if p.opts.Unavailable != nil {
		its = p.opts.Unavailable.Apply(its)
	}
	return its, nil
}

// instanceTypes builds the NodeClass's instance types; p.mu held.
func (p *Provider) instanceTypes(c *region, nc *awsv1.EC2NodeClass) []*cloudprovider.InstanceType {
	// Zone ids come from the subnets, as the reference takes them
	// (pkg/providers/subnet/subnet.go): the controller policies allow no
	// DescribeAvailabilityZones.
	zones, zoneIDs := map[string]bool{}, map[string]string{}
	for _, s := range nc.Status.Subnets {
		zones[s.Zone] = true
		if s.ZoneID != "" {
			zoneIDs[s.Zone] = s.ZoneID
		}
	}
	// A zone whose every subnet a launch found full offers nothing until
	// one is usable again (the reference's IsUnavailable over the zone's
	// subnets).
	usable := map[string]bool{}
	for _, s := range p.subnets.usable(nc.Status.Subnets, p.opts.Clock.Now()) {
		usable[s.Zone] = true
	}
	reserved := map[string][]awsv1.CapacityReservation{}
	for _, r := range nc.Status.CapacityReservations {
		reserved[r.InstanceType] = append(reserved[r.InstanceType], r)
	}
	var out []*cloudprovider.InstanceType
	for _, name := range slices.Sorted(maps.Keys(c.types)) {
		m := c.types[name]
		it := instanceType(m.info, nc, p.opts, p.bandwidth)
		spotCap, spotCapped := spotCap(nc, m.onDemand)
		for _, z := range slices.Sorted(maps.Keys(zones)) {
			if !m.zones[z] {
				continue
			}
			// Without an on-demand price the solver could not rank the
			// offering: unavailable, as the reference's (pricing.go).
			it.Offerings = append(it.Offerings, &cloudprovider.Offering{Zone: z, ZoneID: zoneIDs[z], CapacityType: v1.CapacityTypeOnDemand, Price: m.onDemand, Available: availableIf(m.priced && usable[z])})
			if price, ok := c.spot[name+"/"+z]; ok && m.spot && (!spotCapped || price <= spotCap) {
				it.Offerings = append(it.Offerings, &cloudprovider.Offering{Zone: z, ZoneID: zoneIDs[z], CapacityType: v1.CapacityTypeSpot, Price: price, Available: availableIf(usable[z])})
			}
		}
		for _, r := range reserved[name] {
			if !zones[r.AvailabilityZone] {
				continue
			}
			free := 0
			if known := c.reserved[r.ID]; known != nil {
				free = max(known.available-known.launched, 0)
			}
			// An expiring capacity block takes no launches: EC2 reclaims
			// its instances soon (the reference's reserved offering
			// resolver does the same). It stays listed, unavailable, so
			// its nodes keep their price.
			if r.State == awsv1.CapacityReservationStateExpiring || !usable[r.AvailabilityZone] {
				free = 0
			}
			it.Offerings = append(it.Offerings, &cloudprovider.Offering{Zone: r.AvailabilityZone, ZoneID: zoneIDs[r.AvailabilityZone], CapacityType: v1.CapacityTypeReserved,
				ReservationID: r.ID, ReservationType: reservationType(r), ReservationInterruptible: r.Interruptible,
				Price: m.onDemand / cloudprovider.ReservedPriceDivisor, Available: free})
		}
		if len(it.Offerings) > 0 {
			out = append(out, it)
		}
	}
	return out
}

// reservationType is the offering's word for the reservation's type.
func reservationType(r awsv1.CapacityReservation) string {
	if r.ReservationType == awsv1.CapacityReservationTypeCapacityBlock {
		return v1.ReservationTypeCapacityBlock
	}
	return v1.ReservationTypeDefault
}

// availableIf is Unlimited when ok, else unavailable.
func availableIf(ok bool) int {
	if ok {
		return cloudprovider.Unlimited
	}
	return 0
}
