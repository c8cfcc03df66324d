package ec2endpoint

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// fleetRequest is a CreateFleet request resolved against the templates,
// subnets, images and reservations.
type fleetRequest struct {
	count      int
	allocation sim.Allocation
	// reservationsFirst is use-capacity-reservations-first.
	reservationsFirst bool
	// tags are the fleet's tag specifications by resource type.
	tags       map[string]map[string]string
	candidates []candidate
}

// candidate is one override in one zone: what a fleet may launch.
type candidate struct {
	template *launchTemplate
	echo     templateAndOverridesXML
	// capacityType is spot, on-demand, or reserved when the template
	// targets a reservation or accepts only reservations.
	capacityType                          string
	instanceType, zone, subnetID, imageID string
	securityGroupIDs                      []string
	maxPrice                              float64
	// priority is the override's Priority, +Inf when it has none (lowest).
	priority float64
	// reservationID is the reservation a reserved candidate goes into,
	// reservationOwner the account that owns it (another than the
	// endpoint's when shared with it); targeted says its template named it.
	reservationID, reservationOwner string
	targeted                        bool
	// refusal is the error code when the endpoint itself refuses the
	// candidate (a template accepting only reservations, none of which
	// fits), refusalMessage its message.
	refusal, refusalMessage string
}

// lifecycle is the fleet's word for the candidate's capacity type.
func (c candidate) lifecycle() string {
	if c.capacityType == v1.CapacityTypeSpot {
		return "spot"
	}
	return "on-demand"
}

// parseFleet reads a CreateFleet request. Only instant fleets are served;
// errors a real EC2 gives for the request as a whole (no such template,
// subnet, image, security group or reservation, invalid values) are
// returned as such.
func (s *Server) parseFleet(p params) (fleetRequest, error) {
	if t := p.get("Type"); t != "instant" {
		return fleetRequest{}, errorf("InvalidParameterValue", "Fleet type %q is not served by this endpoint: it launches instant fleets only", cmpOr(t, "maintain"))
	}
	count, set, err := p.integer("TargetCapacitySpecification.TotalTargetCapacity")
	switch {
	case err != nil:
		return fleetRequest{}, err
	case !set:
		return fleetRequest{}, errorf("MissingParameter", "The request must contain the parameter TargetCapacitySpecification.TotalTargetCapacity")
	case count < 1:
		return fleetRequest{}, errorf("InvalidParameterValue", "TotalTargetCapacity must be at least 1")
	}
	req := fleetRequest{count: count, tags: p.tagSpecifications()}
	// CreateFleet's API reference names fleet and instance; volume is
	// accepted too (the reference's fleets tag it,
	// pkg/providers/instance/types.go).
	if err := checkTagTypes(req.tags, []string{"fleet", "instance", "volume"}); err != nil {
		return fleetRequest{}, err
	}
	capacityType := p.get("TargetCapacitySpecification.DefaultTargetCapacityType")
	prioritized := false
	switch capacityType {
	case v1.CapacityTypeSpot:
		switch strategy := p.get("SpotOptions.AllocationStrategy"); strategy {
		case "", "lowest-price", "diversified":
			req.allocation = sim.AllocationLowestPrice
		case "price-capacity-optimized":
			req.allocation = sim.AllocationPriceCapacityOptimized
		case "capacity-optimized":
			req.allocation = sim.AllocationCapacityOptimized
		case "capacity-optimized-prioritized":
			req.allocation, prioritized = sim.AllocationCapacityOptimized, true
		default:
			return fleetRequest{}, errorf("InvalidParameterValue", "Value (%s) for parameter SpotOptions.AllocationStrategy is invalid", strategy)
		}
	case v1.CapacityTypeOnDemand, capacityTypeCapacityBlock, capacityTypeReservedCapacity:
		switch strategy := p.get("OnDemandOptions.AllocationStrategy"); strategy {
		case "", "lowest-price":
			req.allocation = sim.AllocationLowestPrice
		case "prioritized":
			req.allocation, prioritized = sim.AllocationPrioritized, true
		default:
			return fleetRequest{}, errorf("InvalidParameterValue", "Value (%s) for parameter OnDemandOptions.AllocationStrategy is invalid", strategy)
		}
		req.reservationsFirst = p.get("OnDemandOptions.CapacityReservationOptions.UsageStrategy") == "use-capacity-reservations-first"
	case "":
		return fleetRequest{}, errorf("MissingParameter", "The request must contain the parameter TargetCapacitySpecification.DefaultTargetCapacityType")
	default:
		return fleetRequest{}, errorf("InvalidParameterValue", "DefaultTargetCapacityType %s is not served by this endpoint (spot, on-demand, capacity-block, reserved-capacity)", capacityType)
	}
	if err := checkCapacityOptions(p, capacityType); err != nil {
		return fleetRequest{}, err
	}
	reservationTypes := p.list("ReservedCapacityOptions.ReservationType")
	configs := p.items("LaunchTemplateConfigs")
	if len(configs) == 0 {
		return fleetRequest{}, errorf("MissingParameter", "The request must contain the parameter LaunchTemplateConfigs")
	}
	snap := s.cloud.Snapshot()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cfg := range configs {
		lt, err := s.templateLocked(cfg.get("LaunchTemplateSpecification.LaunchTemplateId"), cfg.get("LaunchTemplateSpecification.LaunchTemplateName"))
		if err != nil {
			return fleetRequest{}, err
		}
		version := cfg.get("LaunchTemplateSpecification.Version")
		if !slices.Contains([]string{"", "$Latest", "$Default", "1"}, version) {
			return fleetRequest{}, errorf("InvalidLaunchTemplateId.VersionNotFound", "Could not find launch template version %s for launch template %s", version, lt.id)
		}
		if err := s.checkTemplate(lt, capacityType, snap); err != nil {
			return fleetRequest{}, err
		}
		spec := templateSpecXML{LaunchTemplateID: lt.id, LaunchTemplateName: lt.name, Version: "1"}
		overrides := cfg.items("Overrides")
		if len(overrides) == 0 {
			// The template alone says what to launch.
			overrides = []params{{}}
		}
		for _, o := range overrides {
			cands, err := s.overrideCandidates(lt, spec, o, capacityType, snap)
			if err != nil {
				return fleetRequest{}, err
			}
			for i, c := range cands {
				if c.refusal != "" {
					continue
				}
				if cands[i].refusal, cands[i].refusalMessage = marketRefusal(c, capacityType, reservationTypes, snap); cands[i].refusal == "" {
					cands[i].refusal, cands[i].refusalMessage = s.metadataTagRefusal(lt.data, req.tags)
				}
				if cands[i].refusal == "" {
					cands[i].refusal, cands[i].refusalMessage = s.virtualizationRefusal(c)
				}
			}
			req.candidates = append(req.candidates, cands...)
		}
	}
	if prioritized {
		slices.SortStableFunc(req.candidates, func(a, b candidate) int { return cmp.Compare(a.priority, b.priority) })
	}
	return req, nil
}

// checkTemplate finds what a template names and EC2 would not: security
// groups and reservations; a capacity-block fleet needs a template
// targeting a capacity block, a reserved-capacity one a template that
// launches into reservations only.
func (s *Server) checkTemplate(lt *launchTemplate, capacityType string, snap sim.State) error {
	for _, id := range lt.data.securityGroupIDs {
		if !slices.ContainsFunc(s.securityGroups(), func(g securityGroupXML) bool { return g.GroupID == id }) {
			return errorf("InvalidGroup.NotFound", "The security group '%s' does not exist", id)
		}
	}
	for _, name := range lt.data.securityGroupNames {
		if !slices.ContainsFunc(s.securityGroups(), func(g securityGroupXML) bool { return g.GroupName == name }) {
			return errorf("InvalidGroup.NotFound", "The security group '%s' does not exist in default VPC '%s'", name, vpcID)
		}
	}
	r := snap.Reservations[lt.data.reservationID]
	if lt.data.reservationID != "" && r == nil {
		return errorf("InvalidCapacityReservationId.NotFound", "The capacity reservation ID '%s' does not exist", lt.data.reservationID)
	}
	if capacityType == capacityTypeCapacityBlock && (r == nil || !r.CapacityBlock) {
		return errorf("InvalidParameterValue", "A capacity-block fleet needs launch template %s to target a Capacity Block reservation", lt.name)
	}
	if capacityType == capacityTypeReservedCapacity && r == nil && lt.data.reservationPreference != "capacity-reservations-only" {
		return errorf("InvalidParameterValue", "A reserved-capacity fleet needs launch template %s to target a Capacity Reservation or accept only Capacity Reservations", lt.name)
	}
	return nil
}

// checkCapacityOptions refuses the fleet options EC2 does not take with
// the target capacity type: ReservedCapacityOptions but with
// reserved-capacity (API_ReservedCapacityOptionsRequest), and
// OnDemandOptions.CapacityReservationOptions with capacity-block ("Use
// Capacity Blocks with EC2 Fleet").
func checkCapacityOptions(p params, capacityType string) error {
	if len(p.sub("ReservedCapacityOptions")) > 0 && capacityType != capacityTypeReservedCapacity {
		return errorf("InvalidParameterCombination", "ReservedCapacityOptions can only be specified when DefaultTargetCapacityType is reserved-capacity")
	}
	if len(p.sub("OnDemandOptions.CapacityReservationOptions")) > 0 && capacityType == capacityTypeCapacityBlock {
		return errorf("InvalidParameterCombination", "OnDemandOptions.CapacityReservationOptions cannot be specified when DefaultTargetCapacityType is capacity-block")
	}
	return nil
}

// overrideCandidates resolves one override (or the template alone) into
// a candidate per zone it may launch in: the override's subnet's zone,
// else its AvailabilityZone, else the template's subnet or placement,
// else every zone (EC2 picks one).
func (s *Server) overrideCandidates(lt *launchTemplate, spec templateSpecXML, o params, capacityType string, snap sim.State) ([]candidate, error) {
	echo := overridesXML{
		InstanceType: o.get("InstanceType"), SubnetID: o.get("SubnetId"), AvailabilityZone: o.get("AvailabilityZone"),
		ImageID: o.get("ImageId"), MaxPrice: o.get("MaxPrice"), Priority: o.get("Priority"),
	}
	c := candidate{
		template: lt, echo: templateAndOverridesXML{LaunchTemplateSpecification: spec, Overrides: echo}, capacityType: capacityType,
		instanceType: cmpOr(echo.InstanceType, lt.data.instanceType), imageID: cmpOr(echo.ImageID, lt.data.imageID), priority: math.Inf(1),
	}
	if err := s.checkOverride(c); err != nil {
		return nil, err
	}
	var err error
	if c.maxPrice, err = parsePrice("MaxPrice", echo.MaxPrice); err != nil {
		return nil, err
	}
	if echo.Priority != "" {
		if c.priority, err = strconv.ParseFloat(echo.Priority, 64); err != nil {
			return nil, errorf("InvalidParameterValue", "Invalid value '%s' for Priority", echo.Priority)
		}
	}
	for _, g := range s.securityGroups() {
		if slices.Contains(lt.data.securityGroupIDs, g.GroupID) || slices.Contains(lt.data.securityGroupNames, g.GroupName) {
			c.securityGroupIDs = append(c.securityGroupIDs, g.GroupID)
		}
	}
	zones, err := s.overrideZones(lt, echo)
	if err != nil {
		return nil, err
	}
	out := make([]candidate, 0, len(zones))
	for _, z := range zones {
		zc := c
		zc.zone, zc.subnetID = z, cmpOr(subnetOf(echo, lt), s.zoneSubnet(z))
		if capacityType != v1.CapacityTypeSpot {
			zc = s.placeInReservation(zc, snap)
		}
		out = append(out, zc)
	}
	return out, nil
}

// checkOverride requires an instance type of the catalog and an image
// that exists.
func (s *Server) checkOverride(c candidate) error {
	switch {
	case c.instanceType == "":
		return errorf("MissingParameter", "The request must contain the parameter InstanceType: neither the override nor launch template %s sets one", c.template.name)
	case c.imageID == "":
		return errorf("MissingParameter", "The request must contain the parameter ImageId: neither the override nor launch template %s sets one", c.template.name)
	}
	if _, ok := s.byName[c.instanceType]; !ok {
		return errorf("InvalidParameterValue", "Invalid value '%s' for InstanceType.", c.instanceType)
	}
	if !slices.ContainsFunc(s.imageList(), func(img image) bool { return img.id == c.imageID }) {
		return errorf("InvalidAMIID.NotFound", "The image id '[%s]' does not exist", c.imageID)
	}
	return nil
}

// subnetOf is the subnet an override (or, without subnet and zone, its
// template) names.
func subnetOf(echo overridesXML, lt *launchTemplate) string {
	if echo.SubnetID == "" && echo.AvailabilityZone == "" {
		return lt.data.subnetID
	}
	return echo.SubnetID
}

func (s *Server) overrideZones(lt *launchTemplate, echo overridesXML) ([]string, error) {
	subnet, zone := echo.SubnetID, echo.AvailabilityZone
	if subnet == "" && zone == "" {
		subnet, zone = lt.data.subnetID, lt.data.zone
	}
	switch {
	case subnet != "":
		if sn, ok := s.subnetByID(subnet); ok {
			return []string{sn.zone}, nil
		}
		return nil, errorf("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", subnet)
	case zone != "":
		if s.zoneIndex(zone) < 0 {
			return nil, errorf("InvalidParameterValue", "Invalid availability zone: [%s]", zone)
		}
		return []string{zone}, nil
	}
	return s.profile.Spec.Zones, nil
}

// placeInReservation makes an on-demand candidate whose template targets
// a reservation, or accepts only reservations (capacity-reservations-only),
// a reserved one: into the target, or the first open reservation by id of
// its type and zone. With none fitting, the endpoint refuses it as EC2
// would fail it.
func (s *Server) placeInReservation(c candidate, snap sim.State) candidate {
	d := c.template.data
	switch {
	case d.reservationID != "":
		r := snap.Reservations[d.reservationID]
		c.capacityType, c.reservationID, c.targeted = v1.CapacityTypeReserved, r.ID, true
		if r.InstanceType != c.instanceType || r.Zone != c.zone {
			c.refusal = string(cloudprovider.CodeUnsupported)
			c.refusalMessage = "Your requested instance type (" + c.instanceType + ") and Availability Zone (" + c.zone +
				") do not match Capacity Reservation " + r.ID + " (" + r.InstanceType + ", " + r.Zone + ")."
		}
	case d.reservationPreference == "capacity-reservations-only":
		c.capacityType = v1.CapacityTypeReserved
		for _, id := range slices.Sorted(maps.Keys(snap.Reservations)) {
			r := snap.Reservations[id]
			if r.Type == simv1alpha1.ReservationTypeOpen && r.InstanceType == c.instanceType && r.Zone == c.zone {
				c.reservationID = id
				if r.Available() > 0 {
					break
				}
			}
		}
		if c.reservationID == "" {
			c.refusal = string(cloudprovider.CodeReservationCapacityExceeded)
			c.refusalMessage = "There is no open Capacity Reservation for " + c.instanceType + " in " + c.zone + "."
		}
	}
	if r := snap.Reservations[c.reservationID]; r != nil {
		c.reservationOwner = r.OwnerID
	}
	return c
}

// minMaxPrice is the lowest spot max price EC2 takes: "If you specify a
// maximum price, it must be more than USD $0.001. Specifying a value
// below USD $0.001 will result in an InvalidParameterValue error" (the
// EC2 API model, FleetLaunchTemplateOverridesRequest.MaxPrice).
const minMaxPrice = 0.001

// parsePrice reads a spot max price: a number of dollars of at least
// minMaxPrice, else InvalidParameterValue.
func parsePrice(name, v string) (float64, error) {
	if v == "" {
		return 0, nil
	}
	p, err := strconv.ParseFloat(v, 64)
	if err != nil || p < minMaxPrice {
		return 0, errorf("InvalidParameterValue", "Invalid value '%s' for %s", v, name)
	}
	return p, nil
}

// virtualizationRefusal refuses an override whose type does not run the
// image's virtualization (every image the endpoint serves is HVM), with
// EC2's answer for an HVM image on a paravirtual-only type such as
// t1.micro.
func (s *Server) virtualizationRefusal(c candidate) (code, message string) {
	if slices.Contains(s.typeInfo[c.instanceType].SupportedVirtualizationTypes, "hvm") {
		return "", ""
	}
	return "InvalidParameterCombination", "Non-Windows instances with a virtualization type of 'hvm' are currently not supported for this instance type."
}
