package aws

import (
	"context"
	"fmt"
	"strconv"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// region is what the region sells, as last described: machine shapes,
// the zones each type is offered in, spot and on-demand prices,
// and the capacity reservations the account can see.
type region struct {
	types    map[string]machine
	spot     map[string]float64 // by type/zone
	reserved map[string]*reservation
	loaded   time.Time
}

// machine is one instance type: as EC2 describes it, the zones that sell
// it, whether it is sold as spot, and its on-demand price if it has one.
type machine struct {
	info     ec2types.InstanceTypeInfo
	zones    map[string]bool
	spot     bool
	onDemand float64
	priced   bool
}

// reservation is a capacity reservation's free slots as last described,
// less the launches into it since; for a capacity block, its end.
type reservation struct {
	available int
	launched  int
	blockEnd  time.Time
}

// Refresh reloads the catalog: instance types, their zones,
// spot prices and capacity reservations. A failed call keeps the
// previous catalog.
func (p *Provider) Refresh(ctx context.Context) error {
	c := &region{types: map[string]machine{}, spot: map[string]float64{}, reserved: map[string]*reservation{}, loaded: p.opts.Clock.Now()}
	if err := p.describeTypes(ctx, c); err != nil {
		return err
	}
	if err := p.describeOfferings(ctx, c); err != nil {
		return err
	}
	if err := p.describeSpotPrices(ctx, c); err != nil {
		return err
	}
	p.reportUnpriced(ctx, c)
	if err := p.describeReservations(ctx, c); err != nil {
		return err
	}
	p.mu.Lock()
	p.catalog = c
	p.mu.Unlock()
	return nil
}

// loadedCatalog is the catalog, loaded on first use.
func (p *Provider) loadedCatalog(ctx context.Context) (*region, error) {
	p.mu.RLock()
	c := p.catalog
	p.mu.RUnlock()
	if c != nil {
		return c, nil
	}
	if err := p.Refresh(ctx); err != nil {
		return nil, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.catalog, nil
}

// describeTypes keeps the types Capstan can run nodes on: hardware
// virtualization and an architecture it launches, filtered by EC2 as the
// reference asks (pkg/providers/instancetype/instancetype.go).
func (p *Provider) describeTypes(ctx context.Context, c *region) error {
	prices := p.onDemandPrices(ctx)
	pages := ec2.NewDescribeInstanceTypesPaginator(p.ec2, &ec2.DescribeInstanceTypesInput{Filters: instanceTypeFilters()})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("describing instance types, %w", err)
		}
		for _, info := range out.InstanceTypes {
			name := string(info.InstanceType)
			if !runnable(info) {
				continue
			}
			// A type without an on-demand price stays, its on-demand
			// offerings unavailable (instanceTypes; unpricedTypes says
			// which and why).
			price, priced := prices[name]
			m := machine{info: info, zones: map[string]bool{}, onDemand: price, priced: priced}
			for _, u := range info.SupportedUsageClasses {
				m.spot = m.spot || u == ec2types.UsageClassTypeSpot
			}
			c.types[name] = m
		}
	}
	return nil
}

// instanceTypeFilters ask EC2 for the types nodes can run on: HVM, and an
// architecture Capstan launches.
func instanceTypeFilters() []ec2types.Filter {
	return []ec2types.Filter{
		{Name: awssdk.String("supported-virtualization-type"), Values: []string{string(ec2types.VirtualizationTypeHvm)}},
		{Name: awssdk.String("processor-info.supported-architecture"), Values: []string{string(ec2types.ArchitectureTypeX8664), string(ec2types.ArchitectureTypeArm64)}},
	}
}

// runnable: EC2 described what sizing a node needs (vCPUs, memory, an
// architecture Capstan launches), whatever filters it honoured.
func runnable(info ec2types.InstanceTypeInfo) bool {
	return architecture(info) != "" && vcpus(info) > 0 && info.MemoryInfo != nil && awssdk.ToInt64(info.MemoryInfo.SizeInMiB) > 0
}

func (p *Provider) describeOfferings(ctx context.Context, c *region) error {
	pages := ec2.NewDescribeInstanceTypeOfferingsPaginator(p.ec2, &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("describing instance type offerings, %w", err)
		}
		for _, o := range out.InstanceTypeOfferings {
			if m, ok := c.types[string(o.InstanceType)]; ok {
				m.zones[awssdk.ToString(o.Location)] = true
			}
		}
	}
	return nil
}

// describeSpotPrices keeps each type and zone's latest Linux spot price.
func (p *Provider) describeSpotPrices(ctx context.Context, c *region) error {
	latest := map[string]time.Time{}
	pages := ec2.NewDescribeSpotPriceHistoryPaginator(p.ec2, &ec2.DescribeSpotPriceHistoryInput{
		// Both Linux descriptions, as the reference asks
		// (pkg/providers/pricing/pricing.go UpdateSpotPricing): accounts
		// that predate default VPCs see the "(Amazon VPC)" one.
		StartTime: awssdk.Time(p.opts.Clock.Now()), ProductDescriptions: []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"},
	})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("describing spot prices, %w", err)
		}
		for _, sp := range out.SpotPriceHistory {
			price, err := strconv.ParseFloat(awssdk.ToString(sp.SpotPrice), 64)
			if err != nil || price <= 0 {
				continue
			}
			key := string(sp.InstanceType) + "/" + awssdk.ToString(sp.AvailabilityZone)
			if at := awssdk.ToTime(sp.Timestamp); !at.Before(latest[key]) {
				latest[key], c.spot[key] = at, price
			}
		}
	}
	return nil
}

func (p *Provider) describeReservations(ctx context.Context, c *region) error {
	pages := ec2.NewDescribeCapacityReservationsPaginator(p.ec2, &ec2.DescribeCapacityReservationsInput{
		Filters: []ec2types.Filter{{Name: awssdk.String("state"), Values: []string{"active"}}},
	})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("describing capacity reservations, %w", err)
		}
		for _, r := range out.CapacityReservations {
			res := &reservation{available: int(awssdk.ToInt32(r.AvailableInstanceCount))}
			if r.ReservationType == ec2types.CapacityReservationTypeCapacityBlock {
				res.blockEnd = awssdk.ToTime(r.EndDate)
			}
			c.reserved[awssdk.ToString(r.CapacityReservationId)] = res
		}
	}
	return nil
}
