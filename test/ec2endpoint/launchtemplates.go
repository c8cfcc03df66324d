package ec2endpoint

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// launchTemplate is a launch template, kept in memory: EC2 keeps
// versions, the endpoint only the first (a Karpenter-style provider
// never makes another; it creates a template per configuration).
type launchTemplate struct {
	id, name string
	created  time.Time
	tags     map[string]string
	data     templateData
}

// templateData is what CreateFleet uses of a template's
// LaunchTemplateData.
type templateData struct {
	imageID, instanceType string
	// securityGroupIDs are the data's and its network interfaces' groups.
	securityGroupIDs, securityGroupNames []string
	// subnetID and zone place instances when overrides do not.
	subnetID, zone string
	// reservationPreference and reservationID are the
	// CapacityReservationSpecification: open, none or
	// capacity-reservations-only, and a targeted reservation.
	reservationPreference, reservationID string
	// marketType is InstanceMarketOptions.MarketType (capacity-block,
	// interruptible-capacity-reservation).
	marketType string
	// metadata are the MetadataOptions.
	metadata metadataOptions
	// tags are the data's tag specifications by resource type: what the
	// launch tags on create.
	tags map[string]map[string]string
	// instanceProfile is IamInstanceProfile.Name, whose role a launch
	// passes.
	instanceProfile string
	// blockDevices are the EBS volumes the template maps.
	blockDevices []blockDevice
	// userData is the UserData, base64.
	userData string
	// networkInterfaces are the interfaces an instance gets, each an
	// address of its subnet: the data's, at least the primary one.
	networkInterfaces int
}

// templateTagTypes are the resource types launch template data may tag:
// the ones created at launch (EC2 API Reference,
// LaunchTemplateTagSpecificationRequest).
var templateTagTypes = []string{"instance", "volume", "network-interface", "spot-instances-request"}

// checkTagTypes refuses a tag specification for a resource type not in
// valid, as EC2 does.
func checkTagTypes(specs map[string]map[string]string, valid []string) error {
	for rt := range specs {
		if !slices.Contains(valid, rt) {
			return errorf("InvalidParameterValue", "'%s' is not a valid taggable resource type for this operation.", rt)
		}
	}
	return nil
}

func parseTemplateData(p params) (templateData, error) {
	d := templateData{
		imageID: p.get("ImageId"), instanceType: p.get("InstanceType"),
		securityGroupIDs: p.list("SecurityGroupId"), securityGroupNames: p.list("SecurityGroup"),
		zone:                  p.get("Placement.AvailabilityZone"),
		reservationPreference: p.get("CapacityReservationSpecification.CapacityReservationPreference"),
		reservationID:         p.get("CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId"),
		marketType:            p.get("InstanceMarketOptions.MarketType"),
		tags:                  p.tagSpecifications(),
		instanceProfile:       p.get("IamInstanceProfile.Name"),
		userData:              p.get("UserData"),
	}
	if err := checkTagTypes(d.tags, templateTagTypes); err != nil {
		return templateData{}, err
	}
	var err error
	if d.blockDevices, err = parseBlockDevices(p); err != nil {
		return templateData{}, err
	}
	d.networkInterfaces = max(len(p.items("NetworkInterface")), 1)
	for _, ni := range p.items("NetworkInterface") {
		d.securityGroupIDs = append(d.securityGroupIDs, ni.list("SecurityGroupId")...)
		if d.subnetID == "" {
			d.subnetID = ni.get("SubnetId")
		}
	}
	if !slices.Contains([]string{"", "open", "none", "capacity-reservations-only"}, d.reservationPreference) {
		return templateData{}, errorf("InvalidParameterValue", "Value (%s) for parameter CapacityReservationPreference is invalid. Valid values: open, none, capacity-reservations-only", d.reservationPreference)
	}
	// The EC2 API model's MarketType values.
	if markets := []string{"spot", marketCapacityBlock, marketInterruptible, "on-demand"}; d.marketType != "" && !slices.Contains(markets, d.marketType) {
		return templateData{}, errorf("InvalidParameterValue", "Value (%s) for parameter MarketType is invalid. Valid values: %s", d.marketType, strings.Join(markets, ", "))
	}
	if d.metadata, err = parseMetadataOptions(p.sub("MetadataOptions")); err != nil {
		return templateData{}, err
	}
	return d, nil
}

type launchTemplateXML struct {
	LaunchTemplateID     string   `xml:"launchTemplateId"`
	LaunchTemplateName   string   `xml:"launchTemplateName"`
	CreateTime           string   `xml:"createTime"`
	CreatedBy            string   `xml:"createdBy"`
	DefaultVersionNumber int      `xml:"defaultVersionNumber"`
	LatestVersionNumber  int      `xml:"latestVersionNumber"`
	Tags                 []tagXML `xml:"tagSet>item"`
}

func (s *Server) templateXML(lt *launchTemplate) launchTemplateXML {
	return launchTemplateXML{
		LaunchTemplateID: lt.id, LaunchTemplateName: lt.name, CreateTime: timestamp(lt.created),
		CreatedBy:            fmt.Sprintf("arn:aws:iam::%s:role/capstan", s.opts.AccountID),
		DefaultVersionNumber: 1, LatestVersionNumber: 1, Tags: tagSet(lt.tags),
	}
}

type launchTemplateResponse struct {
	responseMeta
	LaunchTemplate launchTemplateXML `xml:"launchTemplate"`
}

// templateNamePattern is EC2's rule for launch template names.
func templateNamePattern() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9().\-/_]{3,128}$`) }

func (s *Server) createLaunchTemplate(_ context.Context, p params) (response, error) {
	name := p.get("LaunchTemplateName")
	switch {
	case name == "":
		return nil, errorf("MissingParameter", "The request must contain the parameter LaunchTemplateName")
	case !templateNamePattern().MatchString(name):
		return nil, errorf("InvalidLaunchTemplateName.MalformedException", "A launch template name must be between 3 and 128 characters, and may contain letters, numbers, and the following characters: - ( ) . / _.'")
	case len(p.sub("LaunchTemplateData")) == 0:
		return nil, errorf("MissingParameter", "The request must contain the parameter LaunchTemplateData")
	}
	specs := p.tagSpecifications()
	if err := checkTagTypes(specs, []string{"launch-template"}); err != nil {
		return nil, err
	}
	data, err := parseTemplateData(p.sub("LaunchTemplateData"))
	if err != nil {
		return nil, err
	}
	if _, err := userDataBytes(data.userData); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.templateByNameLocked(name) != nil {
		return nil, errorf(string(cloudprovider.CodeInvalidLaunchTemplateNameAlreadyExists), "Launch template name already in use.")
	}
	lt := &launchTemplate{id: s.newIDLocked("lt"), name: name, created: s.opts.Clock.Now(), tags: specs["launch-template"], data: data}
	if lt.tags == nil {
		lt.tags = map[string]string{}
	}
	s.templates[lt.id] = lt
	return &launchTemplateResponse{LaunchTemplate: s.templateXML(lt)}, nil
}

func (s *Server) templateByNameLocked(name string) *launchTemplate {
	for _, lt := range s.templates {
		if lt.name == name {
			return lt
		}
	}
	return nil
}

// templateLocked finds a template by id or, without one, by name, with
// EC2's errors when there is none.
func (s *Server) templateLocked(id, name string) (*launchTemplate, error) {
	switch {
	case id != "":
		if !strings.HasPrefix(id, "lt-") {
			return nil, errorf("InvalidLaunchTemplateId.Malformed", "The specified ID for the launch template (%s) is not valid. Launch template IDs start with lt-", id)
		}
		if lt := s.templates[id]; lt != nil {
			return lt, nil
		}
		return nil, errorf("InvalidLaunchTemplateId.NotFound", "The specified launch template, with template ID %s, does not exist.", id)
	case name != "":
		if lt := s.templateByNameLocked(name); lt != nil {
			return lt, nil
		}
		return nil, errorf(string(cloudprovider.CodeInvalidLaunchTemplateNameNotFound), "The specified launch template, with template name %s, does not exist.", name)
	}
	return nil, errorf("MissingParameter", "The request must contain the parameter LaunchTemplateName or LaunchTemplateId")
}

type describeLaunchTemplatesResponse struct {
	responseMeta
	LaunchTemplates []launchTemplateXML `xml:"launchTemplates>item"`
	NextToken       string              `xml:"nextToken,omitempty"`
}

func (s *Server) describeLaunchTemplates(_ context.Context, p params) (response, error) {
	fs, err := p.filters([]string{"create-time", "launch-template-name"}, true)
	if err != nil {
		return nil, err
	}
	ids, names := p.list("LaunchTemplateId"), p.list("LaunchTemplateName")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if _, err := s.templateLocked(id, ""); err != nil {
			return nil, err
		}
	}
	for _, name := range names {
		if s.templateByNameLocked(name) == nil {
			return nil, errorf(string(cloudprovider.CodeInvalidLaunchTemplateNameNotFound), "At least one of the launch templates specified in the request does not exist.")
		}
	}
	all := slices.Collect(maps.Values(s.templates))
	slices.SortFunc(all, func(a, b *launchTemplate) int { return cmp.Compare(a.id, b.id) })
	var out []launchTemplateXML
	for _, lt := range all {
		x := s.templateXML(lt)
		r := resource{fields: map[string][]string{"create-time": {x.CreateTime}, "launch-template-name": {lt.name}}, tags: lt.tags}
		if (len(ids) == 0 || slices.Contains(ids, lt.id)) && (len(names) == 0 || slices.Contains(names, lt.name)) && matches(fs, r) {
			out = append(out, x)
		}
	}
	items, next, err := page(p, out, pageLimits{min: 1, max: 200})
	if err != nil {
		return nil, err
	}
	return &describeLaunchTemplatesResponse{LaunchTemplates: items, NextToken: next}, nil
}

func (s *Server) deleteLaunchTemplate(_ context.Context, p params) (response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lt, err := s.templateLocked(p.get("LaunchTemplateId"), p.get("LaunchTemplateName"))
	if err != nil {
		return nil, err
	}
	delete(s.templates, lt.id)
	return &launchTemplateResponse{LaunchTemplate: s.templateXML(lt)}, nil
}

// tagTemplatesLocked adds tags to the templates with ids.
func (s *Server) tagTemplatesLocked(ids []string, tags map[string]string) {
	for _, id := range ids {
		maps.Copy(s.templates[id].tags, tags)
	}
}
