package sim

import (
	"context"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// GetInstanceTypes implements CloudProvider: every catalog type, with
// on-demand and spot offerings in each zone (finite pools are not
// advertised: the cloud finds out at launch, as real clouds do) and one
// reserved offering per reservation the NodeClass selects, with the free
// slots the account knows of (Reservation.Advertised). Each offering
// carries its zone's ID (ZoneID), so a pod may pick a zone by either.
func (c *Cloud) GetInstanceTypes(ctx context.Context, np *v1.NodePool) ([]*cloudprovider.InstanceType, error) {
	ref := np.Spec.Template.Spec.NodeClassRef
	if err := cloudprovider.CheckNodeClassRef(c, ref); err != nil {
		return nil, err
	}
	nc, err := c.nodeClass(ctx, ref.Name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	release, err := c.syncLocked(ctx)
	if err != nil {
		c.mu.Unlock()
		return nil, err
	}
	its := c.instanceTypesLocked(nc, c.opts.Clock.Now(), nil)
	release()
	c.mu.Unlock()
	if c.opts.Unavailable != nil {
		its = c.opts.Unavailable.Apply(its)
	}
	return its, nil
}

// instanceTypesLocked builds nc's instance types, only those named
// allows when it is not nil.
func (c *Cloud) instanceTypesLocked(nc *simv1alpha1.SimNodeClass, now time.Time, named func(string) bool) []*cloudprovider.InstanceType {
	status := ResolveNodeClass(nc.Spec, c.reservationsLocked(), now)
	reserved := map[string][]simv1alpha1.CapacityReservation{}
	for _, r := range status.CapacityReservations {
		reserved[r.InstanceType] = append(reserved[r.InstanceType], r)
	}
	spec := &c.opts.Profile.Spec
	zoneIDs := make([]string, len(spec.Zones))
	for i, z := range spec.Zones {
		zoneIDs[i] = ZoneID(spec, z)
	}
	out := make([]*cloudprovider.InstanceType, 0, len(c.opts.Catalog))
	for _, ct := range c.opts.Catalog {
		if named != nil && !named(ct.Name) {
			continue
		}
		od, ok := ct.OnDemandPrice(c.opts.Profile.Spec.Region)
		if !ok {
			continue
		}
		it := c.instanceType(ct)
		capacityTypes := []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}
		for i, z := range spec.Zones {
			it.Offerings = append(it.Offerings,
				&cloudprovider.Offering{Zone: z, ZoneID: zoneIDs[i], CapacityType: v1.CapacityTypeOnDemand, Price: od, Available: cloudprovider.Unlimited},
				&cloudprovider.Offering{Zone: z, ZoneID: zoneIDs[i], CapacityType: v1.CapacityTypeSpot, Price: c.spotPriceLocked(ct, z), Available: cloudprovider.Unlimited},
			)
		}
		for _, r := range reserved[ct.Name] {
			o := &cloudprovider.Offering{Zone: r.Zone, ZoneID: ZoneID(spec, r.Zone), CapacityType: v1.CapacityTypeReserved, ReservationID: r.ID, Price: od / cloudprovider.ReservedPriceDivisor, Available: r.AvailableInstanceCount}
			if known := c.state.Reservations[r.ID]; known != nil {
				o.ReservationType, o.ReservationInterruptible = known.Kind()
			}
			it.Offerings = append(it.Offerings, o)
		}
		if len(reserved[ct.Name]) > 0 {
			capacityTypes = append(capacityTypes, v1.CapacityTypeReserved)
		}
		it.Requirements.Add(
			scheduling.NewRequirement(v1.LabelZone, corev1.NodeSelectorOpIn, spec.Zones...),
			scheduling.NewRequirement(v1.LabelZoneID, corev1.NodeSelectorOpIn, zoneIDs...),
			scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityTypes...),
		)
		out = append(out, it)
	}
	return out
}

// instanceType converts a catalog entry as every provider does, in the
// profile's region.
func (c *Cloud) instanceType(ct catalog.InstanceType) *cloudprovider.InstanceType {
	return ct.CloudInstanceType(c.opts.Profile.Spec.Region)
}

// spotPriceLocked: a profile override (or a SpotPriceChange event), else
// the family's discount off on-demand.
func (c *Cloud) spotPriceLocked(ct catalog.InstanceType, zone string) float64 {
	if p, ok := c.state.SpotPrices[ct.Name+"/"+zone]; ok {
		return p
	}
	p, _ := ct.SpotPrice(c.opts.Profile.Spec.Region)
	return p
}

// maxSpotPrice is what a NodeClass pays at most for spot: its spotMaxPrice,
// else the on-demand price (decision 4). The gcp style has fixed prices
// and no max price.
func (c *Cloud) maxSpotPrice(nc *simv1alpha1.SimNodeClass, onDemand float64) float64 {
	if c.opts.Profile.Spec.Style == simv1alpha1.CloudStyleGCP || nc.Spec.SpotMaxPrice == nil {
		return onDemand
	}
	p, err := strconv.ParseFloat(*nc.Spec.SpotMaxPrice, 64)
	if err != nil {
		return onDemand
	}
	return p
}
