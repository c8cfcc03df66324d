package aws

import (
	"slices"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// reservationKind is what EC2 needs to know of a reservation to launch
// into it: a capacity block, an interruptible reservation, or neither
// (a default one). Each asks for its own market type in the launch
// template and target capacity type in the fleet.
type reservationKind struct {
	capacityBlock, interruptible bool
}

func kindOf(o *cloudprovider.Offering) reservationKind {
	return reservationKind{capacityBlock: o.ReservationType == v1.ReservationTypeCapacityBlock, interruptible: o.ReservationInterruptible}
}

// rank orders kinds when reserved offerings cost the same: default
// reservations, then capacity blocks, then interruptible reservations,
// as the reference's CapacityReservationTypeFilter does
// (pkg/providers/instance/filter/filter.go).
func (k reservationKind) rank() int {
	switch {
	case k.capacityBlock:
		return 1
	case k.interruptible:
		return 2
	}
	return 0
}

// oneFleetOfReservations keeps the reserved candidates one CreateFleet
// can launch: a request has a single target capacity type, so one kind
// of reservation, and at most one capacity block ("Use Capacity Blocks
// with EC2 Fleet": several capacity blocks in one request are not
// supported). The cheapest candidate's kind wins, ties broken by rank;
// for capacity blocks only the cheapest candidate is kept. cands are
// sorted cheapest first (cloudprovider.LaunchCandidates).
func oneFleetOfReservations(cands []cloudprovider.LaunchCandidate) []cloudprovider.LaunchCandidate {
	if len(cands) == 0 {
		return nil
	}
	best := 0
	for i, c := range cands {
		if c.Offering.Price > cands[0].Offering.Price {
			break
		}
		if kindOf(c.Offering).rank() < kindOf(cands[best].Offering).rank() {
			best = i
		}
	}
	kind := kindOf(cands[best].Offering)
	if kind.capacityBlock {
		return []cloudprovider.LaunchCandidate{cands[best]}
	}
	return slices.DeleteFunc(slices.Clone(cands), func(c cloudprovider.LaunchCandidate) bool { return kindOf(c.Offering) != kind })
}

// setCapacity sets the fleet's target capacity type and the options that
// go with it for capacity type ct (and, for reserved launches, the kind
// of reservation), as EC2 requires them:
//   - spot: spot, with a price-capacity-optimized allocation;
//   - on-demand, and a default reservation: on-demand, lowest price;
//   - a capacity block: capacity-block and no OnDemandOptions ("Use
//     Capacity Blocks with EC2 Fleet");
//   - an interruptible reservation: reserved-capacity with
//     ReservedCapacityOptions naming interruptible-capacity-reservation
//     (API_ReservedCapacityOptionsRequest: the options need that target
//     capacity type), no OnDemandOptions.
//
// The same choices as the reference's CreateFleetInputBuilder
// (pkg/providers/instance/types.go).
func setCapacity(in *ec2.CreateFleetInput, ct string, kind reservationKind) {
	in.TargetCapacitySpecification = &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(1)}
	in.OnDemandOptions, in.SpotOptions, in.ReservedCapacityOptions = nil, nil, nil
	spec := in.TargetCapacitySpecification
	switch {
	case ct == v1.CapacityTypeSpot:
		spec.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeSpot
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized}
	case ct == v1.CapacityTypeReserved && kind.capacityBlock:
		spec.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeCapacityBlock
	case ct == v1.CapacityTypeReserved && kind.interruptible:
		spec.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeReservedCapacity
		in.ReservedCapacityOptions = &ec2types.ReservedCapacityOptionsRequest{
			ReservationTypes: []ec2types.FleetReservationType{ec2types.FleetReservationTypeInterruptibleCapacityReservation},
		}
	default:
		spec.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeOnDemand
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice}
	}
}

// reservationSpecification is the launch template's
// CapacityReservationSpecification and InstanceMarketOptions for an
// offering: a reserved one targets its reservation and accepts no other
// capacity (capacity-reservations-only), with the market type a capacity
// block or an interruptible reservation needs; any other opts out of
// reservations, so an on-demand launch is never counted as reserved. The
// reference's launch template Build does the same
// (pkg/providers/launchtemplate/types.go).
func reservationSpecification(o *cloudprovider.Offering) (*ec2types.LaunchTemplateCapacityReservationSpecificationRequest, *ec2types.LaunchTemplateInstanceMarketOptionsRequest) {
	if o == nil || o.ReservationID == "" {
		return &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{CapacityReservationPreference: ec2types.CapacityReservationPreferenceNone}, nil
	}
	spec := &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
		CapacityReservationPreference: ec2types.CapacityReservationPreferenceCapacityReservationsOnly,
		CapacityReservationTarget:     &ec2types.CapacityReservationTarget{CapacityReservationId: awssdk.String(o.ReservationID)},
	}
	switch kind := kindOf(o); {
	case kind.capacityBlock:
		return spec, &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeCapacityBlock}
	case kind.interruptible:
		return spec, &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeInterruptibleCapacityReservation}
	}
	return spec, nil
}
