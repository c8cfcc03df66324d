package aws

import (
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// The launch template's network interfaces as the reference writes them
// for an IPv4 cluster (launchtemplate.go generateNetworkInterfaces).
func TestNetworkInterfaces(t *testing.T) {
	groups := []string{"sg-1"}
	track := &awsv1.ConnectionTracking{TCPEstablishedTimeout: ptr.To(int32(3600))}
	trackReq := &ec2types.ConnectionTrackingSpecificationRequest{TcpEstablishedTimeout: awssdk.Int32(3600)}
	type ni = ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest
	for _, tc := range []struct {
		name string
		spec awsv1.EC2NodeClassSpec
		want []ni
	}{
		{"nothing set: none, groups on the template", awsv1.EC2NodeClassSpec{}, nil},
		{"public address", awsv1.EC2NodeClassSpec{AssociatePublicIPAddress: ptr.To(false)},
			[]ni{{DeviceIndex: awssdk.Int32(0), AssociatePublicIpAddress: ptr.To(false), Groups: groups}}},
		{"prefixes and connection tracking on the primary", awsv1.EC2NodeClassSpec{IPPrefixCount: ptr.To(int32(2)), ConnectionTracking: track},
			[]ni{{DeviceIndex: awssdk.Int32(0), Groups: groups, Ipv4PrefixCount: awssdk.Int32(2), ConnectionTrackingSpecification: trackReq}}},
		{"EFA-only interfaces take no addresses, prefixes or tracking", awsv1.EC2NodeClassSpec{
			AssociatePublicIPAddress: ptr.To(true), IPPrefixCount: ptr.To(int32(1)), ConnectionTracking: track,
			NetworkInterfaces: []awsv1.NetworkInterface{
				{NetworkCardIndex: 0, DeviceIndex: 0, InterfaceType: awsv1.InterfaceTypeInterface},
				{NetworkCardIndex: 1, DeviceIndex: 1, InterfaceType: awsv1.InterfaceTypeEFAOnly},
				{NetworkCardIndex: 2, DeviceIndex: 1, InterfaceType: awsv1.InterfaceTypeInterface},
			}},
			[]ni{
				{NetworkCardIndex: awssdk.Int32(0), DeviceIndex: awssdk.Int32(0), InterfaceType: awssdk.String("interface"), Groups: groups,
					AssociatePublicIpAddress: ptr.To(true), Ipv4PrefixCount: awssdk.Int32(1), ConnectionTrackingSpecification: trackReq},
				{NetworkCardIndex: awssdk.Int32(1), DeviceIndex: awssdk.Int32(1), InterfaceType: awssdk.String("efa-only"), Groups: groups},
				{NetworkCardIndex: awssdk.Int32(2), DeviceIndex: awssdk.Int32(1), InterfaceType: awssdk.String("interface"), Groups: groups,
					AssociatePublicIpAddress: ptr.To(true), ConnectionTrackingSpecification: trackReq},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, networkInterfaces(tc.spec, groups), cmpopts.IgnoreUnexported(ni{}, ec2types.ConnectionTrackingSpecificationRequest{})); diff != "" {
				t.Errorf("network interfaces (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCPUOptionsAndPlacement(t *testing.T) {
	if got := cpuOptions(nil); got != nil {
		t.Errorf("cpuOptions(nil) = %+v", got)
	}
	if got := cpuOptions(&awsv1.CPUOptions{NestedVirtualization: ptr.To("enabled")}); got == nil || got.NestedVirtualization != ec2types.NestedVirtualizationSpecificationEnabled {
		t.Errorf("cpuOptions = %+v, want nested virtualization enabled", got)
	}
	if got := placement(nil); got != nil {
		t.Errorf("placement(nil) = %+v", got)
	}
	if got := placement(&awsv1.PlacementGroup{ID: "pg-1", Name: "training", Strategy: "cluster"}); got == nil || awssdk.ToString(got.GroupId) != "pg-1" {
		t.Errorf("placement = %+v, want group pg-1", got)
	}
}
