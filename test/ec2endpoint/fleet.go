package ec2endpoint

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// nodeClaimTag is the tag a Karpenter-style provider names an instance's
// NodeClaim with; the simulated instance records it as its NodeClaim.
const nodeClaimTag = "karpenter.sh/nodeclaim"

type createFleetResponse struct {
	responseMeta
	FleetID   string             `xml:"fleetId"`
	Errors    []fleetErrorXML    `xml:"errorSet>item"`
	Instances []fleetInstanceXML `xml:"fleetInstanceSet>item"`
}

type fleetErrorXML struct {
	LaunchTemplateAndOverrides templateAndOverridesXML `xml:"launchTemplateAndOverrides"`
	Lifecycle                  string                  `xml:"lifecycle"`
	ErrorCode                  string                  `xml:"errorCode"`
	ErrorMessage               string                  `xml:"errorMessage"`
}

type fleetInstanceXML struct {
	LaunchTemplateAndOverrides templateAndOverridesXML `xml:"launchTemplateAndOverrides"`
	Lifecycle                  string                  `xml:"lifecycle"`
	InstanceIDs                []string                `xml:"instanceIds>item"`
	InstanceType               string                  `xml:"instanceType"`
	SubnetID                   string                  `xml:"subnetId,omitempty"`
	AvailabilityZone           string                  `xml:"availabilityZone,omitempty"`
	AvailabilityZoneID         string                  `xml:"availabilityZoneId,omitempty"`
}

type templateAndOverridesXML struct {
	LaunchTemplateSpecification templateSpecXML `xml:"launchTemplateSpecification"`
	Overrides                   overridesXML    `xml:"overrides"`
}

type templateSpecXML struct {
	LaunchTemplateID   string `xml:"launchTemplateId"`
	LaunchTemplateName string `xml:"launchTemplateName"`
	Version            string `xml:"version"`
}

// overridesXML echoes an override as the request gave it: EC2 does not
// fill in what the request left out, which is why a Karpenter-style
// provider sends AvailabilityZone along with SubnetId.
type overridesXML struct {
	InstanceType     string `xml:"instanceType"`
	SubnetID         string `xml:"subnetId,omitempty"`
	AvailabilityZone string `xml:"availabilityZone,omitempty"`
	ImageID          string `xml:"imageId,omitempty"`
	MaxPrice         string `xml:"maxPrice,omitempty"`
	Priority         string `xml:"priority,omitempty"`
}

// fleetRecord is a fleet launched with a client token: the request (less
// the token) and the answer, which the same request gets again.
type fleetRecord struct {
	request  string
	response createFleetResponse
}

// createFleet launches an instant fleet on the simulated cloud; the
// package documentation says how a request becomes launches. A request
// repeating an earlier one's ClientToken gets the earlier answer and
// launches nothing, as EC2's idempotency promises; with other parameters
// it fails with IdempotentParameterMismatch. Each request first waits out
// the CreateFleetLatency, concurrently with the others; fleets are then
// placed one at a time, so that a retry cannot race its original.
func (s *Server) createFleet(ctx context.Context, p params) (response, error) {
	if d := s.opts.CreateFleetLatency; d > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.opts.Clock.After(d):
		}
	}
	s.fleetMu.Lock()
	defer s.fleetMu.Unlock()
	token, request := p.get("ClientToken"), fingerprint(p)
	if rec, ok := s.fleets[token]; ok && token != "" {
		if rec.request != request {
			return nil, errorf("IdempotentParameterMismatch", "The client token %s was already used with different parameters", token)
		}
		again := rec.response
		return &again, nil
	}
	resp, err := s.launchFleet(ctx, p)
	if err != nil {
		return nil, err
	}
	if token != "" {
		s.fleets[token] = fleetRecord{request: request, response: *resp}
	}
	return resp, nil
}

// fingerprint is the request's parameters but its client token, in
// order, to tell a retry from another request reusing the token.
func fingerprint(p params) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if k != "ClientToken" {
			fmt.Fprintf(&b, "%s=%q&", k, p[k])
		}
	}
	return b.String()
}

// codeInsufficientFreeAddresses is EC2's error for a launch into a
// subnet without enough free private addresses (EC2 API Reference,
// "Error codes": docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html,
// InsufficientFreeAddressesInSubnet).
const codeInsufficientFreeAddresses = "InsufficientFreeAddressesInSubnet"

func (s *Server) launchFleet(ctx context.Context, p params) (*createFleetResponse, error) {
	req, err := s.parseFleet(p)
	if err != nil {
		return nil, err
	}
	if err := s.authorizeFleet(ctx, req); err != nil {
		return nil, err
	}
	for i, c := range req.candidates {
		if c.refusal != "" {
			continue
		}
		if d, denied := errors.AsType[*denial](s.authorizeLaunch(ctx, req, c)); denied {
			e := d.ec2Error()
			req.candidates[i].refusal, req.candidates[i].refusalMessage = e.Code, e.Message
		}
	}
	// The subnets' free addresses are read and taken under one lock, so
	// two fleets never both take a subnet's last address.
	s.addressMu.Lock()
	defer s.addressMu.Unlock()
	free := s.freeAddresses()
	for i, c := range req.candidates {
		if c.refusal == "" && free[c.subnetID] < c.template.data.networkInterfaces {
			req.candidates[i].refusal = codeInsufficientFreeAddresses
			req.candidates[i].refusalMessage = fmt.Sprintf("There are not enough free addresses in subnet '%s' to satisfy the requested number of instances.", c.subnetID)
		}
	}
	s.mu.Lock()
	fleetID := s.newIDLocked("fleet")
	s.mu.Unlock()
	resp := &createFleetResponse{FleetID: fleetID}
	var reserved, plain []candidate
	for _, c := range req.candidates {
		switch {
		case c.refusal != "":
			resp.Errors = append(resp.Errors, fleetErrorXML{LaunchTemplateAndOverrides: c.echo, Lifecycle: c.lifecycle(), ErrorCode: c.refusal, ErrorMessage: c.refusalMessage})
		case c.capacityType == v1.CapacityTypeReserved:
			reserved = append(reserved, c)
		default:
			plain = append(plain, c)
		}
	}
	for range req.count {
		launched := false
		// Reservations the templates target come first: that is what
		// targeting them asks for.
		for _, group := range [][]candidate{reserved, plain} {
			if len(group) == 0 {
				continue
			}
			// The instance outlives the request: its kubelet registers
			// the Node after the launch latency, long after the answer.
			res, err := s.cloud.Launch(context.WithoutCancel(ctx), s.launchRequest(req, group, fleetID))
			if le, ok := errors.AsType[*sim.LaunchError](err); ok {
				resp.Errors = s.appendErrors(ctx, resp.Errors, group, le.Failed)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("launching on the simulated cloud, %w", err)
			}
			// Its node joins as its user data lets it.
			launchedFrom := group[res.Offering]
			d := launchedFrom.template.data
			var capacity corev1.ResourceList
			if img, ok := s.image(launchedFrom.imageID); ok {
				capacity = s.nodeCapacity(launchedFrom.instanceType, d, img)
			}
			s.kubelet.joined(context.WithoutCancel(ctx), res.Instance, s.whyNotJoining(d.userData, launchedFrom.imageID), capacity)
			resp.Errors = s.appendErrors(ctx, resp.Errors, group, res.Failed)
			resp.Instances = s.addInstance(resp.Instances, launchedFrom, res.Instance.ID)
			launched = true
			break
		}
		if !launched {
			break
		}
	}
	return resp, nil
}

// launchRequest is one launch over a group of candidates of one capacity
// type. Each offering carries what the instance records if it launches
// from it: the template's tags under the fleet's, its image, subnet and
// security groups.
func (s *Server) launchRequest(req fleetRequest, group []candidate, fleetID string) sim.LaunchRequest {
	lr := sim.LaunchRequest{
		NodeClaim: &v1.NodeClaim{}, NodeClass: nodeClassName, CapacityType: group[0].capacityType,
		Allocation: req.allocation, ReservationsFirst: req.reservationsFirst,
		// An on-demand instance lands in an open reservation with room
		// when its template's preference is open, EC2's default.
		OpenReservations: group[0].capacityType == v1.CapacityTypeOnDemand,
	}
	for _, c := range group {
		if c.template.data.reservationPreference != "" && c.template.data.reservationPreference != "open" {
			lr.OpenReservations = false
		}
		tags := merged(c.template.data.tags["instance"], req.tags["instance"])
		lr.Offerings = append(lr.Offerings, sim.LaunchOffering{
			InstanceType: c.instanceType, Zone: c.zone, ReservationID: c.reservationID, MaxPrice: c.maxPrice, Tags: tags,
			Attributes: map[string]string{
				attrImageID: c.imageID, attrSubnetID: c.subnetID, attrSecurityGroupIDs: strings.Join(c.securityGroupIDs, ","),
				attrNetworkInterfaces:     strconv.Itoa(c.template.data.networkInterfaces),
				attrReservationPreference: cmpOr(c.template.data.reservationPreference, "open"),
				attrReservationTargeted:   strconv.FormatBool(c.targeted), attrLaunchTemplateID: c.template.id, attrFleetID: fleetID,
			},
		})
		if name := tags[nodeClaimTag]; name != "" {
			lr.NodeClaim.Name = name
		}
	}
	if lr.NodeClaim.Name == "" {
		lr.NodeClaim.Name = fleetID
	}
	return lr
}

// appendErrors adds one error per offering the launch tried and could
// not launch, with the cloud's code (see the package documentation for
// the codes) and its message (a launch fault's own, else EC2's), unless
// the same override already failed with it.
func (s *Server) appendErrors(ctx context.Context, errs []fleetErrorXML, group []candidate, failed []cloudprovider.OfferingError) []fleetErrorXML {
	for _, f := range failed {
		c, ok := matchCandidate(group, f.Offering)
		if !ok {
			continue
		}
		msg := f.Message
		if msg == "" {
			msg = s.errorMessage(ctx, f.Code, c)
		}
		e := fleetErrorXML{LaunchTemplateAndOverrides: c.echo, Lifecycle: c.lifecycle(), ErrorCode: f.Code, ErrorMessage: msg}
		dup := false
		for _, have := range errs {
			dup = dup || have.LaunchTemplateAndOverrides == e.LaunchTemplateAndOverrides && have.ErrorCode == e.ErrorCode
		}
		if !dup {
			errs = append(errs, e)
		}
	}
	return errs
}

// matchCandidate finds the candidate an offering the cloud reports is:
// same type and zone, and the same reservation when it has one (an
// on-demand candidate that went for an open reservation has none).
func matchCandidate(group []candidate, key cloudprovider.OfferingKey) (candidate, bool) {
	var found *candidate
	for i, c := range group {
		if c.instanceType != key.InstanceType || c.zone != key.Zone {
			continue
		}
		if c.reservationID == key.ReservationID {
			return c, true
		}
		if found == nil {
			found = &group[i]
		}
	}
	if found == nil {
		return candidate{}, false
	}
	return *found, true
}

// errorMessage is EC2's message for a launch error code.
func (s *Server) errorMessage(ctx context.Context, code string, c candidate) string {
	switch cloudprovider.CapacityErrorCode(code) {
	case cloudprovider.CodeInsufficientInstanceCapacity:
		var others []string
		for _, z := range s.profile.Spec.Zones {
			if z != c.zone {
				others = append(others, z)
			}
		}
		return fmt.Sprintf("We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). Our system will be working on provisioning additional capacity. You can currently get %s capacity by not specifying an Availability Zone in your request or choosing %s.",
			c.instanceType, c.zone, c.instanceType, strings.Join(others, ", "))
	case cloudprovider.CodeMaxSpotInstanceCountExceeded:
		return "Max spot instance count exceeded"
	case cloudprovider.CodeSpotMaxPriceTooLow:
		spot := "the current Spot price"
		if prices, err := s.cloud.Prices(ctx); err == nil {
			for _, pr := range prices {
				if pr.InstanceType == c.instanceType && pr.Zone == c.zone {
					spot = strconv.FormatFloat(pr.Spot, 'f', 6, 64)
				}
			}
		}
		limit := cmpOr(c.echo.Overrides.MaxPrice, "the On-Demand price")
		return fmt.Sprintf("Your Spot request price of %s is lower than the minimum required Spot request fulfillment price of %s.", limit, spot)
	case cloudprovider.CodeReservationCapacityExceeded:
		return fmt.Sprintf("The requested number of instances exceeds the available capacity of the Capacity Reservation %s.", c.reservationID)
	case cloudprovider.CodeUnsupported:
		return fmt.Sprintf("Your requested instance type (%s) is not supported in your requested Availability Zone (%s).", c.instanceType, c.zone)
	}
	// Launch faults' codes (the profile's launchFaults), with the messages
	// EC2 gives them (the EC2 API error code reference,
	// docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html;
	// the service-linked role's as a CreateFleet error in Karpenter's log
	// in kubernetes/kops#16475; "Invalid IAM Instance Profile name" is the
	// text the reference's IsInstanceProfileNotFound matches).
	switch cloudprovider.LaunchErrorCode(code) {
	case cloudprovider.CodeServiceLinkedRoleCreationNotPermitted:
		return "The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances."
	case cloudprovider.CodeUnauthorizedOperation:
		return "You are not authorized to perform this operation."
	case cloudprovider.CodeAuthFailure:
		return "AWS was not able to validate the provided access credentials"
	case cloudprovider.CodeInvalidParameterValue:
		return "Value for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name"
	case cloudprovider.CodePendingVerification:
		return "Your request for accessing resources in this region is being validated, and you will not be able to launch additional resources in this region until the validation is complete."
	}
	return code
}

// addInstance groups instances by the override and subnet they launched
// in, as EC2 does.
func (s *Server) addInstance(set []fleetInstanceXML, c candidate, id string) []fleetInstanceXML {
	for i := range set {
		if set[i].LaunchTemplateAndOverrides == c.echo && set[i].InstanceType == c.instanceType {
			set[i].InstanceIDs = append(set[i].InstanceIDs, id)
			return set
		}
	}
	x := fleetInstanceXML{LaunchTemplateAndOverrides: c.echo, Lifecycle: c.lifecycle(), InstanceIDs: []string{id}, InstanceType: c.instanceType}
	if !s.opts.OmitFleetInstancePlacement {
		x.SubnetID, x.AvailabilityZone, x.AvailabilityZoneID = c.subnetID, c.zone, s.zoneID(c.zone)
	}
	return append(set, x)
}

// merged is over's entries over base's, nil when both are empty.
func merged(base, over map[string]string) map[string]string {
	if len(base)+len(over) == 0 {
		return nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}
