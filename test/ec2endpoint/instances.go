package ec2endpoint

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// Attributes the endpoint records on a simulated instance
// (sim.Instance.Attributes) at launch, so they outlive a restart as the
// instance does.
const (
	attrImageID               = "imageId"
	attrSubnetID              = "subnetId"
	attrNetworkInterfaces     = "networkInterfaces"
	attrSecurityGroupIDs      = "securityGroupIds"
	attrReservationPreference = "capacityReservationPreference"
	attrReservationTargeted   = "capacityReservationTargeted"
	attrLaunchTemplateID      = "launchTemplateId"
	attrFleetID               = "fleetId"
)

// instanceIDPattern is the form of an instance id: EC2's 8 or 17 hex
// digits, or the simulated cloud's 12.
func instanceIDPattern() *regexp.Regexp { return regexp.MustCompile(`^i-[0-9a-f]{8,17}$`) }

type describeInstancesResponse struct {
	responseMeta
	Reservations []reservationXML `xml:"reservationSet>item"`
	NextToken    string           `xml:"nextToken,omitempty"`
}

// reservationXML is a launch as EC2 reports it; each instance is its own.
type reservationXML struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Instances     []instanceXML `xml:"instancesSet>item"`
}

type instanceXML struct {
	InstanceID                       string                  `xml:"instanceId"`
	ImageID                          string                  `xml:"imageId"`
	State                            stateXML                `xml:"instanceState"`
	PrivateDNSName                   string                  `xml:"privateDnsName"`
	DNSName                          string                  `xml:"dnsName"`
	AmiLaunchIndex                   int                     `xml:"amiLaunchIndex"`
	InstanceType                     string                  `xml:"instanceType"`
	LaunchTime                       string                  `xml:"launchTime"`
	Placement                        placementXML            `xml:"placement"`
	SubnetID                         string                  `xml:"subnetId"`
	VpcID                            string                  `xml:"vpcId"`
	PrivateIPAddress                 string                  `xml:"privateIpAddress"`
	Groups                           []groupXML              `xml:"groupSet>item"`
	Architecture                     string                  `xml:"architecture"`
	RootDeviceType                   string                  `xml:"rootDeviceType"`
	RootDeviceName                   string                  `xml:"rootDeviceName"`
	InstanceLifecycle                string                  `xml:"instanceLifecycle,omitempty"`
	SpotInstanceRequestID            string                  `xml:"spotInstanceRequestId,omitempty"`
	VirtualizationType               string                  `xml:"virtualizationType"`
	Hypervisor                       string                  `xml:"hypervisor"`
	PlatformDetails                  string                  `xml:"platformDetails"`
	Tags                             []tagXML                `xml:"tagSet>item"`
	CapacityReservationID            string                  `xml:"capacityReservationId,omitempty"`
	CapacityReservationSpecification reservationSpecResponse `xml:"capacityReservationSpecification"`
}

type stateXML struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

type placementXML struct {
	AvailabilityZone   string `xml:"availabilityZone"`
	AvailabilityZoneID string `xml:"availabilityZoneId"`
	Tenancy            string `xml:"tenancy"`
}

type groupXML struct {
	GroupID   string `xml:"groupId"`
	GroupName string `xml:"groupName"`
}

type reservationSpecResponse struct {
	Preference string             `xml:"capacityReservationPreference"`
	Target     *reservationTarget `xml:"capacityReservationTarget,omitempty"`
}

type reservationTarget struct {
	CapacityReservationID string `xml:"capacityReservationId"`
}

// EC2's instance state codes; ec2State names them.
const (
	codePending      = 0
	codeRunning      = 16
	codeShuttingDown = 32
	codeTerminated   = 48
	codeStopped      = 80
)

func ec2State(code int) stateXML {
	names := map[int]string{codePending: "pending", codeRunning: "running", codeShuttingDown: "shutting-down", codeTerminated: "terminated", codeStopped: "stopped"}
	return stateXML{Code: code, Name: names[code]}
}

// state is the instance's EC2 state: pending until its Node registers
// (the profile's launch latency), then running; the simulated cloud
// terminates and stops at once.
func (s *Server) state(inst *sim.Instance, now time.Time) stateXML {
	switch {
	case inst.State == sim.InstanceTerminated:
		return ec2State(codeTerminated)
	case inst.State == sim.InstanceStopped:
		return ec2State(codeStopped)
	case now.Before(inst.LaunchTime.Add(s.profile.Spec.LaunchLatency.Duration)):
		return ec2State(codePending)
	}
	return ec2State(codeRunning)
}

// lifecycle is EC2's instanceLifecycle: spot, capacity-block,
// interruptible-capacity-reservation, or empty for on-demand (in a
// reservation or not).
func (s *Server) lifecycle(inst *sim.Instance, reservations map[string]*sim.Reservation) string {
	r := reservations[inst.ReservationID]
	switch {
	case inst.CapacityType == v1.CapacityTypeSpot:
		return "spot"
	case inst.ReservationID == "" || r == nil:
		return ""
	case r.CapacityBlock:
		return marketCapacityBlock
	case r.Interruptible:
		return marketInterruptible
	}
	return ""
}

func (s *Server) instanceXML(inst *sim.Instance, snap sim.State, now time.Time) instanceXML {
	groups := map[string]string{}
	for _, g := range s.securityGroups() {
		groups[g.GroupID] = g.GroupName
	}
	x := instanceXML{
		InstanceID: inst.ID, ImageID: inst.Attributes[attrImageID], State: s.state(inst, now),
		PrivateDNSName: s.privateDNSName(inst), InstanceType: inst.InstanceType, LaunchTime: timestamp(inst.LaunchTime),
		Placement:        placementXML{AvailabilityZone: inst.Zone, AvailabilityZoneID: s.zoneID(inst.Zone), Tenancy: "default"},
		SubnetID:         inst.Attributes[attrSubnetID],
		VpcID:            vpcID,
		PrivateIPAddress: s.privateIP(inst).String(),
		Architecture:     architecture(s.byName[inst.InstanceType].Architecture),
		RootDeviceType:   "ebs", RootDeviceName: "/dev/xvda", VirtualizationType: "hvm", Hypervisor: "xen",
		PlatformDetails: "Linux/UNIX", Tags: tagSet(inst.Tags), InstanceLifecycle: s.lifecycle(inst, snap.Reservations),
		CapacityReservationID:            inst.ReservationID,
		CapacityReservationSpecification: reservationSpecResponse{Preference: cmpOr(inst.Attributes[attrReservationPreference], "open")},
	}
	if inst.ReservationID != "" && inst.Attributes[attrReservationTargeted] == "true" {
		x.CapacityReservationSpecification.Target = &reservationTarget{CapacityReservationID: inst.ReservationID}
	}
	for _, id := range strings.Split(inst.Attributes[attrSecurityGroupIDs], ",") {
		if id != "" {
			x.Groups = append(x.Groups, groupXML{GroupID: id, GroupName: groups[id]})
		}
	}
	if inst.CapacityType == v1.CapacityTypeSpot {
		x.SpotInstanceRequestID = "sir-" + strings.TrimPrefix(inst.ID, "i-")
	}
	return x
}

func cmpOr(v, otherwise string) string {
	if v == "" {
		return otherwise
	}
	return v
}

func (x instanceXML) resource(tags map[string]string) resource {
	return resource{fields: map[string][]string{
		"instance-id": {x.InstanceID}, "instance-type": {x.InstanceType}, "instance-state-name": {x.State.Name},
		"instance-state-code": {strconv.Itoa(x.State.Code)}, "availability-zone": {x.Placement.AvailabilityZone},
		"subnet-id": {x.SubnetID}, "vpc-id": {x.VpcID}, "image-id": {x.ImageID}, "private-dns-name": {x.PrivateDNSName},
		"private-ip-address": {x.PrivateIPAddress}, "instance-lifecycle": {x.InstanceLifecycle}, "architecture": {x.Architecture},
		"capacity-reservation-id": {x.CapacityReservationID}, "spot-instance-request-id": {x.SpotInstanceRequestID},
		"launch-time": {x.LaunchTime},
	}, tags: tags}
}

// describeInstances serves every instance the simulated cloud launched,
// terminated ones included, as EC2 keeps them visible for a while.
func (s *Server) describeInstances(_ context.Context, p params) (response, error) {
	fs, ids, snap, err := s.instanceQuery(p, []string{
		"instance-id", "instance-type", "instance-state-name", "instance-state-code", "availability-zone", "subnet-id",
		"vpc-id", "image-id", "private-dns-name", "private-ip-address", "instance-lifecycle", "architecture",
		"capacity-reservation-id", "spot-instance-request-id", "launch-time",
	}, true)
	if err != nil {
		return nil, err
	}
	now := s.opts.Clock.Now()
	var out []reservationXML
	for _, id := range slices.Sorted(maps.Keys(snap.Instances)) {
		inst := snap.Instances[id]
		x := s.instanceXML(inst, snap, now)
		if len(ids) > 0 && !slices.Contains(ids, id) || !matches(fs, x.resource(inst.Tags)) {
			continue
		}
		out = append(out, reservationXML{ReservationID: "r-" + strings.TrimPrefix(id, "i-"), OwnerID: s.opts.AccountID, Instances: []instanceXML{x}})
	}
	items, next, err := page(p, out, pageLimits{min: 5, max: 1000})
	if err != nil {
		return nil, err
	}
	return &describeInstancesResponse{Reservations: items, NextToken: next}, nil
}

// instanceQuery is a describe call's filters (of the known names, within
// EC2's filter value limit), its instance ids (known, and not with
// MaxResults) and the cloud it asks about.
func (s *Server) instanceQuery(p params, known []string, tagged bool) ([]filter, []string, sim.State, error) {
	fs, err := p.filters(known, tagged)
	if err != nil {
		return nil, nil, sim.State{}, err
	}
	if err := checkFilterLimit(fs); err != nil {
		return nil, nil, sim.State{}, err
	}
	ids := p.list("InstanceId")
	if len(ids) > 0 && p.has("MaxResults") {
		return nil, nil, sim.State{}, errorf("InvalidParameterCombination", "The parameter instancesSet cannot be used with the parameter maxResults")
	}
	snap := s.cloud.Snapshot()
	if err := checkInstanceIDs(ids, snap); err != nil {
		return nil, nil, sim.State{}, err
	}
	return fs, ids, snap, nil
}

// checkInstanceIDs returns EC2's error for ids that are malformed or that
// the cloud never launched.
func checkInstanceIDs(ids []string, snap sim.State) error {
	var missing []string
	for _, id := range ids {
		if !instanceIDPattern().MatchString(id) {
			return errorf("InvalidInstanceID.Malformed", "Invalid id: \"%s\"", id)
		}
		if snap.Instances[id] == nil {
			missing = append(missing, id)
		}
	}
	return notFound(missing)
}

func notFound(ids []string) error {
	switch len(ids) {
	case 0:
		return nil
	case 1:
		return errorf("InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", ids[0])
	}
	return errorf("InvalidInstanceID.NotFound", "The instance IDs '%s' do not exist", strings.Join(ids, ", "))
}

type terminateInstancesResponse struct {
	responseMeta
	Instances []stateChangeXML `xml:"instancesSet>item"`
}

type stateChangeXML struct {
	InstanceID    string   `xml:"instanceId"`
	CurrentState  stateXML `xml:"currentState"`
	PreviousState stateXML `xml:"previousState"`
}

// terminateInstances terminates; an instance already terminated answers
// terminated → terminated, as EC2 does while it still lists it. An id the
// cloud never launched fails the whole call with InvalidInstanceID.NotFound.
func (s *Server) terminateInstances(ctx context.Context, p params) (response, error) {
	ids := p.list("InstanceId")
	if len(ids) == 0 {
		return nil, errorf("MissingParameter", "The request must contain the parameter InstanceId")
	}
	for _, id := range ids {
		if !instanceIDPattern().MatchString(id) {
			return nil, errorf("InvalidInstanceID.Malformed", "Invalid id: \"%s\"", id)
		}
	}
	snap := s.cloud.Snapshot()
	now := s.opts.Clock.Now()
	before, err := s.cloud.TerminateInstances(ctx, ids)
	if unknown, ok := errors.AsType[*sim.UnknownInstanceError](err); ok {
		return nil, notFound(unknown.IDs)
	}
	if err != nil {
		return nil, fmt.Errorf("terminating instances, %w", err)
	}
	resp := &terminateInstancesResponse{}
	for i, id := range ids {
		change := stateChangeXML{InstanceID: id, CurrentState: ec2State(codeShuttingDown), PreviousState: s.state(snap.Instances[id], now)}
		if before[i] == sim.InstanceTerminated {
			change.CurrentState, change.PreviousState = ec2State(codeTerminated), ec2State(codeTerminated)
		}
		resp.Instances = append(resp.Instances, change)
	}
	return resp, nil
}

type emptyResponse struct {
	responseMeta
	Return bool `xml:"return"`
}

// createTags tags instances and launch templates.
func (s *Server) createTags(ctx context.Context, p params) (response, error) {
	ids, tags := p.list("ResourceId"), p.tags("Tag")
	switch {
	case len(ids) == 0:
		return nil, errorf("MissingParameter", "The request must contain the parameter ResourceId")
	case len(tags) == 0:
		return nil, errorf("MissingParameter", "The request must contain the parameter Tag")
	}
	for k := range tags {
		if strings.HasPrefix(strings.ToLower(k), "aws:") {
			return nil, errorf("InvalidParameterValue", "Tag keys starting with 'aws:' are reserved for internal use")
		}
	}
	var instances, templates []string
	for _, id := range ids {
		switch {
		case strings.HasPrefix(id, "i-"):
			instances = append(instances, id)
		case strings.HasPrefix(id, "lt-"):
			templates = append(templates, id)
		default:
			return nil, errorf("InvalidID", "The ID '%s' is not valid", id)
		}
	}
	if err := checkInstanceIDs(instances, s.cloud.Snapshot()); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range templates {
		if _, err := s.templateLocked(id, ""); err != nil {
			return nil, err
		}
	}
	if len(instances) > 0 {
		err := s.cloud.TagInstances(ctx, instances, tags)
		if unknown, ok := errors.AsType[*sim.UnknownInstanceError](err); ok {
			return nil, notFound(unknown.IDs)
		}
		if err != nil {
			return nil, fmt.Errorf("tagging instances, %w", err)
		}
	}
	s.tagTemplatesLocked(templates, tags)
	return &emptyResponse{Return: true}, nil
}
