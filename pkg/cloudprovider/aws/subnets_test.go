package aws

import (
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

var subnetsNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// classSubnets are two subnets in zone a, one in zone b, in the status's
// order.
var classSubnets = []awsv1.Subnet{{ID: "subnet-a1", Zone: "a"}, {ID: "subnet-a2", Zone: "a"}, {ID: "subnet-b1", Zone: "b"}}

// chosen is the subnet id per zone.
func chosen(z map[string]zonalSubnet) map[string]string {
	out := map[string]string{}
	for zone, zs := range z {
		out[zone] = zs.ID
	}
	return out
}

// The expected choices follow the reference's ZonalSubnetsForLaunch
// (pkg/providers/subnet/subnet.go): the most free addresses, in-flight
// launches counted as the fewest pods of their types, the first at a tie.
func TestReserveSubnets(t *testing.T) {
	cases := []struct {
		name     string
		free     map[string]int32
		launches []map[string]int32 // predicted addresses per zone, per launch before the last
		full     []string
		want     map[string]string
	}{
		{"the most free addresses", map[string]int32{"subnet-a1": 10, "subnet-a2": 40, "subnet-b1": 5}, nil, nil,
			map[string]string{"a": "subnet-a2", "b": "subnet-b1"}},
		{"the first at a tie", map[string]int32{"subnet-a1": 40, "subnet-a2": 40, "subnet-b1": 5}, nil, nil,
			map[string]string{"a": "subnet-a1", "b": "subnet-b1"}},
		{"launches in flight count", map[string]int32{"subnet-a1": 40, "subnet-a2": 30, "subnet-b1": 5},
			[]map[string]int32{{"a": 29}}, nil, map[string]string{"a": "subnet-a2", "b": "subnet-b1"}},
		{"in flight past zero still ranks", map[string]int32{"subnet-a1": 3, "subnet-a2": 3, "subnet-b1": 5},
			[]map[string]int32{{"a": 29}, {"a": 29}, {"a": 29}}, nil, map[string]string{"a": "subnet-a2", "b": "subnet-b1"}},
		{"a full subnet is skipped", map[string]int32{"subnet-a1": 40, "subnet-a2": 1, "subnet-b1": 5}, nil, []string{"subnet-a1"},
			map[string]string{"a": "subnet-a2", "b": "subnet-b1"}},
		{"a zone whose subnets are full has none", map[string]int32{"subnet-a1": 40, "subnet-a2": 1, "subnet-b1": 5}, nil, []string{"subnet-a1", "subnet-a2"},
			map[string]string{"b": "subnet-b1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSubnetIPs()
			s.observe(tc.free, subnetsNow)
			for _, id := range tc.full {
				s.markFull(id, subnetsNow, time.Minute)
			}
			for _, l := range tc.launches {
				s.reserve(classSubnets, l, subnetsNow)
			}
			if diff := cmp.Diff(tc.want, chosen(s.reserve(classSubnets, map[string]int32{"a": 29, "b": 29}, subnetsNow))); diff != "" {
				t.Errorf("subnets (-want +got):\n%s", diff)
			}
		})
	}
}

// A fleet gives back what it took from the subnets it did not launch
// into; a subnet described since keeps the new count.
func TestReleaseSubnets(t *testing.T) {
	s := newSubnetIPs()
	s.observe(map[string]int32{"subnet-a1": 40, "subnet-b1": 40}, subnetsNow)
	got := s.reserve(classSubnets, map[string]int32{"a": 10, "b": 10}, subnetsNow)
	s.release(got, "subnet-a1")
	want := map[string]int32{"subnet-a1": 30, "subnet-b1": 40}
	if diff := cmp.Diff(want, s.inflight); diff != "" {
		t.Errorf("in flight (-want +got):\n%s", diff)
	}
	got = s.reserve(classSubnets, map[string]int32{"a": 10, "b": 10}, subnetsNow)
	s.observe(map[string]int32{"subnet-b1": 12}, subnetsNow.Add(time.Minute))
	s.release(got, "")
	if diff := cmp.Diff(map[string]int32{"subnet-a1": 30}, s.inflight); diff != "" {
		t.Errorf("in flight after a describe (-want +got):\n%s", diff)
	}
}

// A full subnet is skipped for the TTL, then tried again; counts older
// than SubnetIPsTTL are described again.
func TestSubnetMarksExpire(t *testing.T) {
	s := newSubnetIPs()
	s.observe(map[string]int32{"subnet-a1": 40, "subnet-a2": 20, "subnet-b1": 5}, subnetsNow)
	s.markFull("subnet-a1", subnetsNow, 3*time.Minute)
	if got := s.usable(classSubnets, subnetsNow.Add(time.Minute)); len(got) != 2 {
		t.Errorf("usable %v, want subnet-a2 and subnet-b1", got)
	}
	if got := s.usable(classSubnets, subnetsNow.Add(3*time.Minute)); len(got) != 3 {
		t.Errorf("usable after the TTL %v, want all", got)
	}
	if diff := cmp.Diff([]string(nil), s.stale(classSubnets, subnetsNow.Add(time.Minute))); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"subnet-a1", "subnet-a2", "subnet-b1"}, s.stale(classSubnets, subnetsNow.Add(SubnetIPsTTL))); diff != "" {
		t.Error(diff)
	}
}

// InsufficientFreeAddressesInSubnet marks the subnet, not the offering;
// other errors stay.
func TestMarkFullSubnets(t *testing.T) {
	p := pricedProvider(t, "us-west-2", nil, true)
	fleetErr := func(code, subnet string) ec2types.CreateFleetError {
		return ec2types.CreateFleetError{ErrorCode: awssdk.String(code), LaunchTemplateAndOverrides: &ec2types.LaunchTemplateAndOverridesResponse{
			Overrides: &ec2types.FleetLaunchTemplateOverrides{InstanceType: "m5.large", SubnetId: awssdk.String(subnet)}}}
	}
	rest, full := p.markFullSubnets([]ec2types.CreateFleetError{
		fleetErr(string(cloudprovider.CodeInsufficientFreeAddressesInSubnet), "subnet-a1"),
		fleetErr(string(cloudprovider.CodeInsufficientFreeAddressesInSubnet), "subnet-a1"),
		fleetErr(string(cloudprovider.CodeInsufficientInstanceCapacity), "subnet-b1"),
	})
	if len(rest) != 1 || awssdk.ToString(rest[0].ErrorCode) != string(cloudprovider.CodeInsufficientInstanceCapacity) {
		t.Errorf("other errors %v, want the InsufficientInstanceCapacity one", rest)
	}
	if diff := cmp.Diff([]string{"subnet-a1"}, full); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff(map[string]string{"a": "subnet-a2", "b": "subnet-b1"}, chosen(p.subnets.reserve(classSubnets, nil, p.opts.Clock.Now()))); diff != "" {
		t.Errorf("after the mark (-want +got):\n%s", diff)
	}
}
