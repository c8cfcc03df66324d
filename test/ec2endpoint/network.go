package ec2endpoint

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// The synthesized network: one VPC, 10.0.0.0/16; one private subnet per
// zone of the profile, the zone's /19 in order (10.0.0.0/19 for the
// first, 10.0.32.0/19 for the second, ...); two security groups. Ids are
// fixed, EC2's long form, numbered from 1: vpc-00000000000000001, the
// subnets subnet-00000000000000001 onwards in zone order,
// sg-00000000000000001 (the cluster's) and sg-00000000000000002 (the
// nodes').
const (
	vpcCIDR = "10.0.0.0/16"
	// subnetBits is each subnet's prefix length, subnetSize its addresses.
	subnetBits = 19
	subnetSize = 1 << (32 - subnetBits)
	// reservedAddresses are the addresses AWS keeps in every subnet.
	reservedAddresses = 5
)

// vpcID is the VPC's id.
const vpcID = "vpc-00000000000000001"

func subnetID(zoneIndex int) string { return fmt.Sprintf("subnet-%017x", zoneIndex+1) }

// discoveryTags are the tags a Karpenter-style provider selects the
// cluster's resources by.
func (s *Server) discoveryTags(name string) map[string]string {
	return map[string]string{"Name": name, "karpenter.sh/discovery": s.opts.ClusterName}
}

type describeSubnetsResponse struct {
	responseMeta
	Subnets   []subnetXML `xml:"subnetSet>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

type subnetXML struct {
	SubnetID                string   `xml:"subnetId"`
	SubnetArn               string   `xml:"subnetArn"`
	State                   string   `xml:"state"`
	OwnerID                 string   `xml:"ownerId"`
	VpcID                   string   `xml:"vpcId"`
	CidrBlock               string   `xml:"cidrBlock"`
	AvailableIPAddressCount int      `xml:"availableIpAddressCount"`
	AvailabilityZone        string   `xml:"availabilityZone"`
	AvailabilityZoneID      string   `xml:"availabilityZoneId"`
	DefaultForAz            bool     `xml:"defaultForAz"`
	MapPublicIPOnLaunch     bool     `xml:"mapPublicIpOnLaunch"`
	Tags                    []tagXML `xml:"tagSet>item"`
}

// subnets are the synthesized subnets; each one's free addresses are its
// size less AWS's reserved five and the instances running in its zone.
func (s *Server) subnets() []subnetXML {
	live := map[string]int{}
	for _, inst := range s.cloud.Snapshot().Instances {
		if inst.State != sim.InstanceTerminated {
			live[inst.Zone]++
		}
	}
	var out []subnetXML
	for i, z := range s.profile.Spec.Zones {
		id := subnetID(i)
		tags := s.discoveryTags(fmt.Sprintf("%s-private-%s", s.opts.ClusterName, z))
		tags["kubernetes.io/role/internal-elb"] = "1"
		out = append(out, subnetXML{
			SubnetID: id, SubnetArn: fmt.Sprintf("arn:aws:ec2:%s:%s:subnet/%s", s.profile.Spec.Region, s.opts.AccountID, id),
			State: "available", OwnerID: s.opts.AccountID, VpcID: vpcID, CidrBlock: subnetPrefix(i).String(),
			AvailableIPAddressCount: subnetSize - reservedAddresses - live[z],
			AvailabilityZone:        z, AvailabilityZoneID: s.zoneID(z), Tags: tagSet(tags),
		})
	}
	return out
}

// subnetPrefix is the CIDR of zone i's subnet.
func subnetPrefix(zoneIndex int) netip.Prefix {
	return netip.PrefixFrom(addrAt(zoneIndex*subnetSize), subnetBits)
}

// addrAt is the address offset addresses into the VPC.
func addrAt(offset int) netip.Addr {
	base := netip.MustParsePrefix(vpcCIDR).Addr().As4()
	n := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	n += uint32(offset)
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// privateIP is an instance's address in its zone's subnet, from its
// number: the subnet's first addresses are AWS's.
func (s *Server) privateIP(inst *sim.Instance) netip.Addr {
	hosts := subnetSize - reservedAddresses
	return addrAt(s.zoneIndex(inst.Zone)*subnetSize + 4 + int((idNumber(inst.ID)-1)%uint64(hosts)))
}

// privateDNSName is EC2's name for the instance's address, and its
// Node's name.
func (s *Server) privateDNSName(inst *sim.Instance) string {
	return "ip-" + strings.ReplaceAll(s.privateIP(inst).String(), ".", "-") + "." + s.dnsSuffix()
}

func (s *Server) describeSubnets(_ context.Context, p params) (response, error) {
	fs, err := p.filters([]string{"subnet-id", "vpc-id", "availability-zone", "availability-zone-id", "state", "cidr-block", "default-for-az", "owner-id"}, true)
	if err != nil {
		return nil, err
	}
	all := s.subnets()
	ids := p.list("SubnetId")
	for _, id := range ids {
		if !strings.HasPrefix(id, "subnet-") {
			return nil, errorf("InvalidSubnetID.Malformed", "Invalid subnet ID: %s", id)
		}
		if !slices.ContainsFunc(all, func(sn subnetXML) bool { return sn.SubnetID == id }) {
			return nil, errorf("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", id)
		}
	}
	var out []subnetXML
	for _, sn := range all {
		r := resource{fields: map[string][]string{
			"subnet-id": {sn.SubnetID}, "vpc-id": {sn.VpcID}, "availability-zone": {sn.AvailabilityZone},
			"availability-zone-id": {sn.AvailabilityZoneID}, "state": {sn.State}, "cidr-block": {sn.CidrBlock},
			"default-for-az": {strconv.FormatBool(sn.DefaultForAz)}, "owner-id": {sn.OwnerID},
		}, tags: tagMap(sn.Tags)}
		if (len(ids) == 0 || slices.Contains(ids, sn.SubnetID)) && matches(fs, r) {
			out = append(out, sn)
		}
	}
	items, next, err := page(p, out, pageLimits{min: 5, max: 1000})
	if err != nil {
		return nil, err
	}
	return &describeSubnetsResponse{Subnets: items, NextToken: next}, nil
}

type describeSecurityGroupsResponse struct {
	responseMeta
	Groups    []securityGroupXML `xml:"securityGroupInfo>item"`
	NextToken string             `xml:"nextToken,omitempty"`
}

type securityGroupXML struct {
	GroupID          string   `xml:"groupId"`
	GroupName        string   `xml:"groupName"`
	GroupDescription string   `xml:"groupDescription"`
	VpcID            string   `xml:"vpcId"`
	OwnerID          string   `xml:"ownerId"`
	SecurityGroupArn string   `xml:"securityGroupArn"`
	Tags             []tagXML `xml:"tagSet>item"`
}

// securityGroups are the synthesized groups: the cluster's, named and
// tagged as EKS names its cluster security group, and the nodes'. Both
// carry the discovery tag.
func (s *Server) securityGroups() []securityGroupXML {
	cluster := s.discoveryTags("eks-cluster-sg-" + s.opts.ClusterName)
	cluster["aws:eks:cluster-name"] = s.opts.ClusterName
	cluster["kubernetes.io/cluster/"+s.opts.ClusterName] = "owned"
	groups := []struct {
		name, description string
		tags              map[string]string
	}{
		{"eks-cluster-sg-" + s.opts.ClusterName, "EKS created security group applied to ENI that is attached to EKS Control Plane master nodes, as well as any managed workloads.", cluster},
		{s.opts.ClusterName + "-node", "Security group for all nodes in the cluster.", s.discoveryTags(s.opts.ClusterName + "-node")},
	}
	out := make([]securityGroupXML, len(groups))
	for i, g := range groups {
		id := fmt.Sprintf("sg-%017x", i+1)
		out[i] = securityGroupXML{
			GroupID: id, GroupName: g.name, GroupDescription: g.description, VpcID: vpcID, OwnerID: s.opts.AccountID,
			SecurityGroupArn: fmt.Sprintf("arn:aws:ec2:%s:%s:security-group/%s", s.profile.Spec.Region, s.opts.AccountID, id),
			Tags:             tagSet(g.tags),
		}
	}
	return out
}

func (s *Server) describeSecurityGroups(_ context.Context, p params) (response, error) {
	fs, err := p.filters([]string{"group-id", "group-name", "vpc-id", "description", "owner-id"}, true)
	if err != nil {
		return nil, err
	}
	all := s.securityGroups()
	ids, names := p.list("GroupId"), p.list("GroupName")
	for _, id := range ids {
		if !strings.HasPrefix(id, "sg-") {
			return nil, errorf("InvalidGroupId.Malformed", "Invalid id: \"%s\" (expecting \"sg-...\")", id)
		}
		if !slices.ContainsFunc(all, func(g securityGroupXML) bool { return g.GroupID == id }) {
			return nil, errorf("InvalidGroup.NotFound", "The security group '%s' does not exist", id)
		}
	}
	for _, name := range names {
		if !slices.ContainsFunc(all, func(g securityGroupXML) bool { return g.GroupName == name }) {
			return nil, errorf("InvalidGroup.NotFound", "The security group '%s' does not exist in default VPC '%s'", name, vpcID)
		}
	}
	var out []securityGroupXML
	for _, g := range all {
		r := resource{fields: map[string][]string{
			"group-id": {g.GroupID}, "group-name": {g.GroupName}, "vpc-id": {g.VpcID}, "description": {g.GroupDescription}, "owner-id": {g.OwnerID},
		}, tags: tagMap(g.Tags)}
		if (len(ids) == 0 || slices.Contains(ids, g.GroupID)) && (len(names) == 0 || slices.Contains(names, g.GroupName)) && matches(fs, r) {
			out = append(out, g)
		}
	}
	items, next, err := page(p, out, pageLimits{min: 5, max: 1000})
	if err != nil {
		return nil, err
	}
	return &describeSecurityGroupsResponse{Groups: items, NextToken: next}, nil
}

func tagMap(tags []tagXML) map[string]string {
	out := make(map[string]string, len(tags))
	for _, t := range tags {
		out[t.Key] = t.Value
	}
	return out
}
