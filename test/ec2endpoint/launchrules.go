package ec2endpoint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// Market types and target capacity types a launch into a reservation
// needs (the EC2 API model in aws-sdk-go-v2: MarketType,
// DefaultTargetCapacityType, FleetReservationType).
const (
	marketCapacityBlock          = "capacity-block"
	marketInterruptible          = "interruptible-capacity-reservation"
	capacityTypeCapacityBlock    = "capacity-block"
	capacityTypeReservedCapacity = "reserved-capacity"
)

// codeInvalidParameterValue is EC2's code for each refusal here.
const codeInvalidParameterValue = "InvalidParameterValue"

// marketRefusal is EC2's refusal of a launch into the candidate's
// reservation without the purchase options that reservation needs, ""
// when there is none:
//   - a capacity block needs the template's MarketType capacity-block and
//     the fleet's DefaultTargetCapacityType capacity-block ("Use Capacity
//     Blocks with EC2 Fleet");
//   - an interruptible reservation needs MarketType
//     interruptible-capacity-reservation and a reserved-capacity fleet
//     whose ReservedCapacityOptions name that reservation type ("Launch
//     instances into an interruptible Capacity Reservation",
//     API_ReservedCapacityOptionsRequest);
//   - either market type into anything else is refused the same way.
//
// The message is the one EC2 gives a launch into a capacity block without
// its market type, as reported in
// terraform-aws-modules/terraform-aws-ec2-instance#404.
func marketRefusal(c candidate, capacityType string, reservationTypes []string, snap sim.State) (string, string) {
	market := c.template.data.marketType
	var r *sim.Reservation
	if c.reservationID != "" {
		r = snap.Reservations[c.reservationID]
	}
	ok := true
	switch {
	case r != nil && r.CapacityBlock:
		ok = market == marketCapacityBlock && capacityType == capacityTypeCapacityBlock
	case r != nil && r.Interruptible:
		ok = market == marketInterruptible && capacityType == capacityTypeReservedCapacity && slices.Contains(reservationTypes, marketInterruptible)
	case market == marketCapacityBlock, market == marketInterruptible:
		ok = false
	}
	if ok {
		return "", ""
	}
	return codeInvalidParameterValue, "The market type (purchasing) option is not valid. Choose a different market type and try again"
}

// metadataTagRefusal is EC2's refusal of a launch whose instance tags
// would be in its instance metadata while a tag key holds a character
// the metadata paths cannot ("/" among them): "Work with instance tags
// in instance metadata" in the EC2 user guide. Tags are in the metadata
// when the template enables them, or leaves them to an account default
// that does (Options.InstanceMetadataTags). The message is EC2's, as
// the reference met it (aws/karpenter-provider-aws#7012, which made its
// templates disable them).
func (s *Server) metadataTagRefusal(d templateData, fleetTags map[string]map[string]string) (string, string) {
	enabled := d.metadata.instanceMetadataTags == "enabled" || d.metadata.instanceMetadataTags == "" && s.opts.InstanceMetadataTags
	if !enabled {
		return "", ""
	}
	tags := merged(d.tags["instance"], fleetTags["instance"])
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if !validMetadataTagKey(k) {
			return codeInvalidParameterValue, fmt.Sprintf("'%s' is not a valid tag key. Tag keys must match pattern ([0-9a-zA-Z\\-_+=,.@:]{1,255}), and must not be a reserved name ('.', '..', '_index')", k)
		}
	}
	return "", ""
}

// validMetadataTagKey is the pattern and reserved names of EC2's message.
func validMetadataTagKey(k string) bool {
	if len(k) == 0 || len(k) > 255 || k == "." || k == ".." || k == "_index" {
		return false
	}
	allowed := func(r rune) bool {
		return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune(`-_+=,.@:`, r)
	}
	for _, r := range k {
		if !allowed(r) {
			return false
		}
	}
	return true
}

// metadataOptions are a template's MetadataOptions.
type metadataOptions struct {
	httpEndpoint, httpProtocolIPv6, httpTokens, instanceMetadataTags string
}

// parseMetadataOptions reads and checks MetadataOptions against the
// values the EC2 API model allows (LaunchTemplateInstanceMetadataOptions
// enums; a hop limit of 1 to 64).
func parseMetadataOptions(p params) (metadataOptions, error) {
	m := metadataOptions{
		httpEndpoint: p.get("HttpEndpoint"), httpProtocolIPv6: p.get("HttpProtocolIpv6"),
		httpTokens: p.get("HttpTokens"), instanceMetadataTags: p.get("InstanceMetadataTags"),
	}
	for _, f := range []struct {
		name, value string
		allowed     []string
	}{
		{"HttpEndpoint", m.httpEndpoint, []string{"enabled", "disabled"}},
		{"HttpProtocolIpv6", m.httpProtocolIPv6, []string{"enabled", "disabled"}},
		{"HttpTokens", m.httpTokens, []string{"optional", "required"}},
		{"InstanceMetadataTags", m.instanceMetadataTags, []string{"enabled", "disabled"}},
	} {
		if f.value != "" && !slices.Contains(f.allowed, f.value) {
			return metadataOptions{}, errorf(codeInvalidParameterValue, "Value (%s) for parameter MetadataOptions.%s is invalid. Valid values: %s", f.value, f.name, strings.Join(f.allowed, ", "))
		}
	}
	if hops, set, err := p.integer("HttpPutResponseHopLimit"); err != nil || set && (hops < 1 || hops > 64) {
		return metadataOptions{}, errorf(codeInvalidParameterValue, "Value (%s) for parameter MetadataOptions.HttpPutResponseHopLimit is invalid. It must be between 1 and 64", p.get("HttpPutResponseHopLimit"))
	}
	return m, nil
}
