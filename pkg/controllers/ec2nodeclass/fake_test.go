package ec2nodeclass

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/smithy-go"
)

// fakeAccount is the account the fake answers as: its "self".
const fakeAccount = "111122223333"

// fakeEC2 is an in-memory stand-in for the EC2 API behind the EC2
// interface: it filters its inventory on the inputs' Filters (EC2's
// names, tag:KEY, tag-key, * and ? wildcards), owners and ids as EC2
// does, refuses filter names it does not know, and pages its answers
// (pageSize items at most) so that the paginators are exercised.
type fakeEC2 struct {
	mu           sync.Mutex
	now          time.Time
	pageSize     int
	subnets      []ec2types.Subnet
	groups       []ec2types.SecurityGroup
	images       []ec2types.Image
	reservations []ec2types.CapacityReservation
	// placementGroups are all the account's placement groups.
	placementGroups []ec2types.PlacementGroup
	// parameters are the SSM parameters GetParameter answers (the fake
	// stands for SSM too), by name.
	parameters map[string]string
	// fail makes an operation fail with the error, by operation name.
	fail  map[string]error
	calls map[string]int
}

func (f *fakeEC2) begin(op string) error {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[op]++
	return f.fail[op]
}

func (f *fakeEC2) setFail(op string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail == nil {
		f.fail = map[string]error{}
	}
	f.fail[op] = err
}

// update changes the inventory while a manager may be calling.
func (f *fakeEC2) update(fn func(*fakeEC2)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeEC2) DescribeSubnets(_ context.Context, in *ec2.DescribeSubnetsInput, _ ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error) {
	err := f.begin("DescribeSubnets")
	defer f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var out []ec2types.Subnet
	for _, s := range f.subnets {
		ok, err := matches(in.Filters, s.Tags, map[string]string{
			"subnet-id": aws.ToString(s.SubnetId), "availability-zone": aws.ToString(s.AvailabilityZone),
		})
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, s)
		}
	}
	items, next := page(out, in.NextToken, in.MaxResults, f.pageSize)
	return &ec2.DescribeSubnetsOutput{Subnets: items, NextToken: next}, nil
}

func (f *fakeEC2) DescribeSecurityGroups(_ context.Context, in *ec2.DescribeSecurityGroupsInput, _ ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error) {
	err := f.begin("DescribeSecurityGroups")
	defer f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var out []ec2types.SecurityGroup
	for _, g := range f.groups {
		ok, err := matches(in.Filters, g.Tags, map[string]string{
			"group-id": aws.ToString(g.GroupId), "group-name": aws.ToString(g.GroupName),
		})
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, g)
		}
	}
	items, next := page(out, in.NextToken, in.MaxResults, f.pageSize)
	return &ec2.DescribeSecurityGroupsOutput{SecurityGroups: items, NextToken: next}, nil
}

func (f *fakeEC2) DescribeImages(_ context.Context, in *ec2.DescribeImagesInput, _ ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error) {
	err := f.begin("DescribeImages")
	defer f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var out []ec2types.Image
	for _, img := range f.images {
		if len(in.Owners) > 0 && !slices.ContainsFunc(in.Owners, func(o string) bool {
			return o == aws.ToString(img.OwnerId) || o == aws.ToString(img.ImageOwnerAlias) || (o == "self" && aws.ToString(img.OwnerId) == fakeAccount)
		}) {
			continue
		}
		if !aws.ToBool(in.IncludeDeprecated) && img.DeprecationTime != nil {
			if t, err := time.Parse(time.RFC3339, *img.DeprecationTime); err == nil && !t.After(f.now) {
				continue
			}
		}
		ok, err := matches(in.Filters, img.Tags, map[string]string{
			"image-id": aws.ToString(img.ImageId), "name": aws.ToString(img.Name), "state": string(img.State),
			"architecture": string(img.Architecture),
		})
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, img)
		}
	}
	items, next := page(out, in.NextToken, in.MaxResults, f.pageSize)
	return &ec2.DescribeImagesOutput{Images: items, NextToken: next}, nil
}

func (f *fakeEC2) DescribeCapacityReservations(_ context.Context, in *ec2.DescribeCapacityReservationsInput, _ ...func(*ec2.Options)) (*ec2.DescribeCapacityReservationsOutput, error) {
	err := f.begin("DescribeCapacityReservations")
	defer f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if len(in.CapacityReservationIds) > 0 && in.MaxResults != nil {
		return nil, &smithy.GenericAPIError{Code: "InvalidParameterCombination", Message: "MaxResults cannot be used with CapacityReservationIds"}
	}
	for _, id := range in.CapacityReservationIds {
		if !slices.ContainsFunc(f.reservations, func(r ec2types.CapacityReservation) bool { return aws.ToString(r.CapacityReservationId) == id }) {
			return nil, &smithy.GenericAPIError{Code: "InvalidCapacityReservationId.NotFound", Message: fmt.Sprintf("The capacity reservation ID '%s' does not exist", id)}
		}
	}
	var out []ec2types.CapacityReservation
	for _, r := range f.reservations {
		if len(in.CapacityReservationIds) > 0 && !slices.Contains(in.CapacityReservationIds, aws.ToString(r.CapacityReservationId)) {
			continue
		}
		ok, err := matches(in.Filters, r.Tags, map[string]string{
			"state": string(r.State), "owner-id": aws.ToString(r.OwnerId),
			"instance-match-criteria": string(r.InstanceMatchCriteria), "instance-type": aws.ToString(r.InstanceType),
		})
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	items, next := page(out, in.NextToken, in.MaxResults, f.pageSize)
	return &ec2.DescribeCapacityReservationsOutput{CapacityReservations: items, NextToken: next}, nil
}

// matches applies EC2's filter semantics: every filter must match, a
// filter matches when any of its values does.
func matches(filters []ec2types.Filter, tags []ec2types.Tag, fields map[string]string) (bool, error) {
	for _, flt := range filters {
		name := aws.ToString(flt.Name)
		var have []string
		switch {
		case name == "tag-key":
			for _, t := range tags {
				have = append(have, aws.ToString(t.Key))
			}
		case strings.HasPrefix(name, "tag:"):
			for _, t := range tags {
				if aws.ToString(t.Key) == strings.TrimPrefix(name, "tag:") {
					have = append(have, aws.ToString(t.Value))
				}
			}
		default:
			v, ok := fields[name]
			if !ok {
				return false, &smithy.GenericAPIError{Code: "InvalidParameterValue", Message: fmt.Sprintf("The filter '%s' is invalid", name)}
			}
			have = []string{v}
		}
		if !slices.ContainsFunc(flt.Values, func(pattern string) bool {
			return slices.ContainsFunc(have, func(h string) bool { return wildcard(pattern).MatchString(h) })
		}) {
			return false, nil
		}
	}
	return true, nil
}

// wildcard is an EC2 filter value as a regexp: * any run, ? any one.
func wildcard(pattern string) *regexp.Regexp {
	quoted := regexp.QuoteMeta(pattern)
	quoted = strings.ReplaceAll(quoted, `\*`, ".*")
	quoted = strings.ReplaceAll(quoted, `\?`, ".")
	return regexp.MustCompile("^" + quoted + "$")
}

// page is one page of items from the token's offset: at most max (when
// set) and size (when positive) items, and the next token if more are left.
func page[T any](items []T, token *string, max *int32, size int) ([]T, *string) {
	start, _ := strconv.Atoi(aws.ToString(token))
	n := len(items) - start
	if max != nil && int(*max) < n {
		n = int(*max)
	}
	if size > 0 && size < n {
		n = size
	}
	if start+n >= len(items) {
		return items[start:], nil
	}
	return items[start : start+n], aws.String(strconv.Itoa(start + n))
}

func tags(kv ...string) []ec2types.Tag {
	var out []ec2types.Tag
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, ec2types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
	}
	return out
}

func subnet(id, zone, zoneID string, free int32, kv ...string) ec2types.Subnet {
	return ec2types.Subnet{SubnetId: aws.String(id), AvailabilityZone: aws.String(zone), AvailabilityZoneId: aws.String(zoneID),
		AvailableIpAddressCount: aws.Int32(free), Tags: tags(kv...)}
}

func group(id, name string, kv ...string) ec2types.SecurityGroup {
	return ec2types.SecurityGroup{GroupId: aws.String(id), GroupName: aws.String(name), Tags: tags(kv...)}
}

func image(id, name, owner string, arch ec2types.ArchitectureValues, created time.Time, kv ...string) ec2types.Image {
	img := ec2types.Image{ImageId: aws.String(id), Name: aws.String(name), OwnerId: aws.String(owner),
		Architecture: arch, State: ec2types.ImageStateAvailable, CreationDate: aws.String(created.UTC().Format("2006-01-02T15:04:05.000Z")),
		Tags: tags(kv...)}
	if owner == "amazon" {
		img.OwnerId, img.ImageOwnerAlias = aws.String("602401143452"), aws.String("amazon")
	}
	return img
}

func deprecated(img ec2types.Image, at time.Time) ec2types.Image {
	img.DeprecationTime = aws.String(at.UTC().Format("2006-01-02T15:04:05.000Z"))
	return img
}

func reservation(id, owner string, imc ec2types.InstanceMatchCriteria, kv ...string) ec2types.CapacityReservation {
	return ec2types.CapacityReservation{CapacityReservationId: aws.String(id), OwnerId: aws.String(owner), InstanceMatchCriteria: imc,
		InstanceType: aws.String("m5.large"), AvailabilityZone: aws.String("us-west-2a"), State: ec2types.CapacityReservationStateActive,
		Tags: tags(kv...)}
}

// GetParameter answers a parameter of f.parameters, and SSM's
// ParameterNotFound for any other.
func (f *fakeEC2) GetParameter(_ context.Context, in *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	err := f.begin("GetParameter")
	defer f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	v, ok := f.parameters[aws.ToString(in.Name)]
	if !ok {
		return nil, &ssmtypes.ParameterNotFound{}
	}
	return &ssm.GetParameterOutput{Parameter: &ssmtypes.Parameter{Name: in.Name, Value: aws.String(v), Type: ssmtypes.ParameterTypeString}}, nil
}

// DescribePlacementGroups answers the groups of the ids or names asked
// that are in the state filter's states, as EC2 does.
func (f *fakeEC2) DescribePlacementGroups(_ context.Context, in *ec2.DescribePlacementGroupsInput, _ ...func(*ec2.Options)) (*ec2.DescribePlacementGroupsOutput, error) {
	err := f.begin("DescribePlacementGroups")
	defer f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := &ec2.DescribePlacementGroupsOutput{}
	for _, g := range f.placementGroups {
		if len(in.GroupIds) > 0 && !slices.Contains(in.GroupIds, aws.ToString(g.GroupId)) ||
			len(in.GroupNames) > 0 && !slices.Contains(in.GroupNames, aws.ToString(g.GroupName)) {
			continue
		}
		ok, err := matches(in.Filters, g.Tags, map[string]string{"state": string(g.State)})
		if err != nil {
			return nil, err
		}
		if ok {
			out.PlacementGroups = append(out.PlacementGroups, g)
		}
	}
	return out, nil
}
