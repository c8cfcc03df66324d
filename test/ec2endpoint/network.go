package ec2endpoint

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// The synthesized network: one VPC, 10.0.0.0/16; each zone of the
// profile its /19 in order (10.0.0.0/19 for the first, 10.0.32.0/19 for
// the second, ...), holding the subnets the profile lists for it, in
// order and each aligned to its size, or one subnet of the whole /19;
// two security groups. Ids are fixed, EC2's long form, numbered from 1:
// vpc-00000000000000001; the subnets subnet-00000000000000001 onwards,
// each zone's first in zone order, then the zones' others; sg-...1 (the
// cluster's) and sg-...2 (the nodes').
const (
	vpcCIDR = "10.0.0.0/16"
	// zoneBits is each zone's block's prefix length, zoneSize its
	// addresses.
	zoneBits = 19
	zoneSize = 1 << (32 - zoneBits)
	// smallestSubnetBits is the longest prefix AWS allows a subnet.
	smallestSubnetBits = 28
	// reservedAddresses are the addresses AWS keeps in every subnet.
	reservedAddresses = 5
)

// vpcID is the VPC's id.
const vpcID = "vpc-00000000000000001"

// subnet is one synthesized subnet.
type subnet struct {
	id, zone string
	prefix   netip.Prefix
	// used are the addresses other network interfaces hold.
	used int
	// tags replace the discovery tags when set.
	tags map[string]string
}

// size is the subnet's addresses AWS lets instances use.
func (sn subnet) size() int { return 1<<(32-sn.prefix.Bits()) - reservedAddresses }

// network lays out the profile's subnets.
func network(profile simv1alpha1.CloudProfileSpec) ([]subnet, error) {
	byZone := map[string][]simv1alpha1.Subnet{}
	for _, sn := range profile.Subnets {
		if !slices.Contains(profile.Zones, sn.Zone) {
			return nil, fmt.Errorf("subnet in zone %q, which the profile does not have", sn.Zone)
		}
		if sn.PrefixLength < zoneBits || sn.PrefixLength > smallestSubnetBits {
			return nil, fmt.Errorf("subnet in %s: prefix length %d is not in [%d, %d]", sn.Zone, sn.PrefixLength, zoneBits, smallestSubnetBits)
		}
		if sn.UsedAddresses < 0 || sn.UsedAddresses > 1<<(32-sn.PrefixLength)-reservedAddresses {
			return nil, fmt.Errorf("subnet in %s: %d used addresses do not fit a /%d", sn.Zone, sn.UsedAddresses, sn.PrefixLength)
		}
		byZone[sn.Zone] = append(byZone[sn.Zone], sn)
	}
	var firsts, others []subnet
	for i, z := range profile.Zones {
		specs := byZone[z]
		if len(specs) == 0 {
			specs = []simv1alpha1.Subnet{{Zone: z, PrefixLength: zoneBits}}
		}
		offset := i * zoneSize
		for j, spec := range specs {
			size := 1 << (32 - spec.PrefixLength)
			offset = (offset + size - 1) / size * size
			if offset+size > (i+1)*zoneSize {
				return nil, fmt.Errorf("the subnets of %s do not fit its /%d", z, zoneBits)
			}
			sn := subnet{zone: z, prefix: netip.PrefixFrom(addrAt(offset), spec.PrefixLength), used: spec.UsedAddresses, tags: spec.Tags}
			offset += size
			if j == 0 {
				firsts = append(firsts, sn)
			} else {
				others = append(others, sn)
			}
		}
	}
	out := slices.Concat(firsts, others)
	for i := range out {
		out[i].id = fmt.Sprintf("subnet-%017x", i+1)
	}
	return out, nil
}

// subnetByID is the subnet with id.
func (s *Server) subnetByID(id string) (subnet, bool) {
	i := slices.IndexFunc(s.network, func(sn subnet) bool { return sn.id == id })
	if i < 0 {
		return subnet{}, false
	}
	return s.network[i], true
}

// zoneSubnet is the zone's first subnet, where EC2 places an instance
// given a zone and no subnet (its default subnet).
func (s *Server) zoneSubnet(zone string) string {
	for _, sn := range s.network {
		if sn.zone == zone {
			return sn.id
		}
	}
	return ""
}

// freeAddresses are, per subnet, its addresses less AWS's reserved five,
// the other interfaces' and one per network interface of each instance
// not terminated in it: what DescribeSubnets counts as available.
func (s *Server) freeAddresses() map[string]int {
	out := map[string]int{}
	for _, sn := range s.network {
		out[sn.id] = sn.size() - sn.used
	}
	for _, inst := range s.cloud.Snapshot().Instances {
		if inst.State == sim.InstanceTerminated {
			continue
		}
		n, err := strconv.Atoi(inst.Attributes[attrNetworkInterfaces])
		if err != nil || n < 1 {
			n = 1
		}
		out[inst.Attributes[attrSubnetID]] -= n
	}
	return out
}

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

// subnets are the synthesized subnets as DescribeSubnets answers them.
func (s *Server) subnets() []subnetXML {
	free := s.freeAddresses()
	var out []subnetXML
	for _, sn := range s.network {
		tags := sn.tags
		if tags == nil {
			tags = s.discoveryTags(fmt.Sprintf("%s-private-%s", s.opts.ClusterName, sn.zone))
			tags["kubernetes.io/role/internal-elb"] = "1"
		}
		out = append(out, subnetXML{
			SubnetID: sn.id, SubnetArn: fmt.Sprintf("arn:aws:ec2:%s:%s:subnet/%s", s.profile.Spec.Region, s.opts.AccountID, sn.id),
			State: "available", OwnerID: s.opts.AccountID, VpcID: vpcID, CidrBlock: sn.prefix.String(),
			AvailableIPAddressCount: max(free[sn.id], 0),
			AvailabilityZone:        sn.zone, AvailabilityZoneID: s.zoneID(sn.zone), Tags: tagSet(tags),
		})
	}
	return out
}

// addrAt is the address offset addresses into the VPC.
func addrAt(offset int) netip.Addr {
	base := netip.MustParsePrefix(vpcCIDR).Addr().As4()
	n := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	n += uint32(offset)
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// privateIP is an instance's address in its subnet, from its number:
// the subnet's first addresses are AWS's.
func (s *Server) privateIP(inst *sim.Instance) netip.Addr {
	sn, ok := s.subnetByID(inst.Attributes[attrSubnetID])
	if !ok {
		sn, _ = s.subnetByID(s.zoneSubnet(inst.Zone))
	}
	base := netip.MustParsePrefix(vpcCIDR).Addr().As4()
	first := sn.prefix.Addr().As4()
	offset := int(first[2]-base[2])<<8 | int(first[3]-base[3])
	return addrAt(offset + 4 + int((idNumber(inst.ID)-1)%uint64(max(sn.size(), 1))))
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
