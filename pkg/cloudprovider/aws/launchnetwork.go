package aws

import (
	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// networkInterfaces are the launch template's network interfaces, as the
// reference writes them for an IPv4 cluster (launchtemplate.go
// generateNetworkInterfaces): with spec.networkInterfaces, each one on
// its card and device index with its type, the security groups, and for
// ENA ("interface") ones the public address choice, the connection
// tracking timeouts and, on the primary interface, spec.ipPrefixCount
// (EC2 refuses these on EFA-only interfaces); else, when the class sets
// a public address choice, IP prefixes or connection tracking, one
// primary interface with them. nil means none: the groups then go in the
// template's SecurityGroupIds.
func networkInterfaces(spec awsv1.EC2NodeClassSpec, groups []string) []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest {
	track := connectionTracking(spec.ConnectionTracking)
	if len(spec.NetworkInterfaces) == 0 {
		if spec.AssociatePublicIPAddress == nil && spec.IPPrefixCount == nil && track == nil {
			return nil
		}
		return []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{
			DeviceIndex: awssdk.Int32(0), AssociatePublicIpAddress: spec.AssociatePublicIPAddress, Groups: groups,
			Ipv4PrefixCount: spec.IPPrefixCount, ConnectionTrackingSpecification: track,
		}}
	}
	out := make([]ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest, 0, len(spec.NetworkInterfaces))
	for _, ni := range spec.NetworkInterfaces {
		req := ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{
			NetworkCardIndex: awssdk.Int32(ni.NetworkCardIndex), DeviceIndex: awssdk.Int32(ni.DeviceIndex),
			InterfaceType: awssdk.String(string(ni.InterfaceType)), Groups: groups,
		}
		if ni.InterfaceType != awsv1.InterfaceTypeEFAOnly {
			req.AssociatePublicIpAddress, req.ConnectionTrackingSpecification = spec.AssociatePublicIPAddress, track
			if ni.NetworkCardIndex == 0 && ni.DeviceIndex == 0 {
				req.Ipv4PrefixCount = spec.IPPrefixCount
			}
		}
		out = append(out, req)
	}
	return out
}

func connectionTracking(ct *awsv1.ConnectionTracking) *ec2types.ConnectionTrackingSpecificationRequest {
	if ct == nil || (ct.TCPEstablishedTimeout == nil && ct.UDPStreamTimeout == nil && ct.UDPTimeout == nil) {
		return nil
	}
	return &ec2types.ConnectionTrackingSpecificationRequest{
		TcpEstablishedTimeout: ct.TCPEstablishedTimeout, UdpStreamTimeout: ct.UDPStreamTimeout, UdpTimeout: ct.UDPTimeout,
	}
}

// cpuOptions are the template's CPU options: nested virtualization when
// the class sets it.
func cpuOptions(o *awsv1.CPUOptions) *ec2types.LaunchTemplateCpuOptionsRequest {
	if o == nil || o.NestedVirtualization == nil {
		return nil
	}
	return &ec2types.LaunchTemplateCpuOptionsRequest{NestedVirtualization: ec2types.NestedVirtualizationSpecification(*o.NestedVirtualization)}
}

// placement puts instances into the placement group the class resolved
// (status.placementGroup), by id as the reference does; nil without one.
func placement(g *awsv1.PlacementGroup) *ec2types.LaunchTemplatePlacementRequest {
	if g == nil {
		return nil
	}
	return &ec2types.LaunchTemplatePlacementRequest{GroupId: awssdk.String(g.ID)}
}
