package ec2endpoint_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
)

func TestDescribeSubnets(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		in   *ec2.DescribeSubnetsInput
		want []string
	}{
		{"discovery tag", &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "test-cluster")}},
			[]string{"subnet-00000000000000001 us-west-2a usw2-az1 10.0.0.0/19", "subnet-00000000000000002 us-west-2b usw2-az2 10.0.32.0/19"}},
		{"other cluster", &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "other")}}, nil},
		{"tag key and vpc", &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("tag-key", "kubernetes.io/role/internal-elb"), filter("vpc-id", "vpc-00000000000000001")}},
			[]string{"subnet-00000000000000001 us-west-2a usw2-az1 10.0.0.0/19", "subnet-00000000000000002 us-west-2b usw2-az2 10.0.32.0/19"}},
		{"by id", &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-00000000000000002"}}, []string{"subnet-00000000000000002 us-west-2b usw2-az2 10.0.32.0/19"}},
		{"name wildcard", &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("tag:Name", "test-cluster-private-*a")}}, []string{"subnet-00000000000000001 us-west-2a usw2-az1 10.0.0.0/19"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.client.DescribeSubnets(ctx, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range out.Subnets {
				got = append(got, *s.SubnetId+" "+*s.AvailabilityZone+" "+*s.AvailabilityZoneId+" "+*s.CidrBlock)
				if *s.AvailableIpAddressCount != 8187 || *s.VpcId != "vpc-00000000000000001" || s.State != ec2types.SubnetStateAvailable {
					t.Errorf("subnet %s: %d free, vpc %s, %s", *s.SubnetId, *s.AvailableIpAddressCount, *s.VpcId, s.State)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("subnets (-want +got):\n%s", diff)
			}
		})
	}
	_, err := f.client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-0000000000000000f"}})
	if code := apiCode(t, err); code != "InvalidSubnetID.NotFound" {
		t.Errorf("unknown subnet: %q", code)
	}
}

func TestDescribeSecurityGroups(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		in   *ec2.DescribeSecurityGroupsInput
		want []string
	}{
		{"discovery tag", &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "test-cluster")}},
			[]string{"sg-00000000000000001 eks-cluster-sg-test-cluster", "sg-00000000000000002 test-cluster-node"}},
		{"eks cluster tag", &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("tag-key", "kubernetes.io/cluster/test-cluster")}},
			[]string{"sg-00000000000000001 eks-cluster-sg-test-cluster"}},
		{"by name", &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("group-name", "*-node")}}, []string{"sg-00000000000000002 test-cluster-node"}},
		{"by id", &ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-00000000000000002"}}, []string{"sg-00000000000000002 test-cluster-node"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.client.DescribeSecurityGroups(ctx, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, g := range out.SecurityGroups {
				got = append(got, *g.GroupId+" "+*g.GroupName)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
		})
	}
	_, err := f.client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-0000000000000000f"}})
	if code := apiCode(t, err); code != "InvalidGroup.NotFound" {
		t.Errorf("unknown group: %q", code)
	}
}

// A subnet's free addresses go down as instances run in its zone.
func TestSubnetFreeAddressesCountInstances(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	lt := createTemplate(t, f, "free-addresses", nil)
	launch(t, f, fleetInput(lt, "on-demand", override("m5.large", "subnet-00000000000000002")))
	out, err := f.client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-00000000000000002"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToInt32(out.Subnets[0].AvailableIpAddressCount); got != 8186 {
		t.Errorf("free addresses %d, want 8186", got)
	}
}

// A zone with several subnets, each aligned in the zone's /19: free
// addresses are its size less AWS's five, the other interfaces' and one
// per network interface of each instance; a launch into a subnet with
// too few is refused with InsufficientFreeAddressesInSubnet (EC2 API
// Reference, "Error codes").
func TestSeveralSubnetsPerZone(t *testing.T) {
	f := newFixture(t, profile(func(s *simv1alpha1.CloudProfileSpec) {
		s.Subnets = []simv1alpha1.Subnet{
			{Zone: "us-west-2a", PrefixLength: 28, UsedAddresses: 9},
			{Zone: "us-west-2a", PrefixLength: 27, Tags: map[string]string{"team": "e2e"}},
		}
	}))
	ctx := context.Background()
	free := func() []string {
		t.Helper()
		out, err := f.client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range out.Subnets {
			got = append(got, fmt.Sprintf("%s %s %s %d", *s.SubnetId, *s.AvailabilityZone, *s.CidrBlock, *s.AvailableIpAddressCount))
		}
		return got
	}
	want := []string{
		"subnet-00000000000000001 us-west-2a 10.0.0.0/28 2",
		"subnet-00000000000000002 us-west-2b 10.0.32.0/19 8187",
		"subnet-00000000000000003 us-west-2a 10.0.0.32/27 27",
	}
	if diff := cmp.Diff(want, free()); diff != "" {
		t.Errorf("subnets (-want +got):\n%s", diff)
	}
	tagged, err := f.client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("tag:team", "e2e")}})
	if err != nil || len(tagged.Subnets) != 1 || *tagged.Subnets[0].SubnetId != "subnet-00000000000000003" {
		t.Errorf("the tagged subnet: %v, %v", tagged, err)
	}
	twoENIs := createTemplate(t, f, "two-enis", func(d *ec2types.RequestLaunchTemplateData) {
		d.SecurityGroupIds = nil
		d.NetworkInterfaces = []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{
			{DeviceIndex: aws.Int32(0), Groups: []string{"sg-00000000000000002"}}, {DeviceIndex: aws.Int32(1), Groups: []string{"sg-00000000000000002"}},
		}
	})
	inA := func(subnet string) ec2types.FleetLaunchTemplateOverridesRequest {
		return ec2types.FleetLaunchTemplateOverridesRequest{InstanceType: "m5.large", SubnetId: aws.String(subnet), AvailabilityZone: aws.String("us-west-2a")}
	}
	if out := launch(t, f, fleetInput(twoENIs, "on-demand", inA("subnet-00000000000000001"))); len(out.Instances) != 1 {
		t.Fatalf("two interfaces into two free addresses: %+v", out.Errors)
	}
	out := launch(t, f, fleetInput(twoENIs, "on-demand", inA("subnet-00000000000000001")))
	if len(out.Instances) != 0 || len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != "InsufficientFreeAddressesInSubnet" {
		t.Errorf("a full subnet: instances %v, errors %+v", out.Instances, out.Errors)
	}
	lt := createTemplate(t, f, "one-eni", nil)
	if out := launch(t, f, fleetInput(lt, "on-demand", inA("subnet-00000000000000001"), inA("subnet-00000000000000003"))); len(out.Instances) != 1 ||
		aws.ToString(out.Instances[0].SubnetId) != "subnet-00000000000000003" {
		t.Errorf("a fleet over a full and a free subnet: %+v", out)
	}
	want[0], want[2] = "subnet-00000000000000001 us-west-2a 10.0.0.0/28 0", "subnet-00000000000000003 us-west-2a 10.0.0.32/27 26"
	if diff := cmp.Diff(want, free()); diff != "" {
		t.Errorf("subnets after the launches (-want +got):\n%s", diff)
	}
}
