package aws

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// SubnetIPsTTL is how long DescribeSubnets' free address counts are used
// before a launch asks again: the reference's AvailableIPAddressTTL
// (pkg/cache/cache.go).
const SubnetIPsTTL = 5 * time.Minute

// maxFilterValues is the most values EC2 takes in one filter.
const maxFilterValues = 200

// subnetIPs is, per subnet, what the launches know of its free
// addresses, as the reference's subnet provider
// (pkg/providers/subnet/subnet.go) and unavailable-offerings cache
// (pkg/cache/unavailableofferings.go, its subnet part) keep it. It is
// safe for concurrent use.
type subnetIPs struct {
	mu sync.Mutex
	// described is DescribeSubnets' free addresses and when it said so.
	described map[string]describedIPs
	// inflight is, for the subnets launched into (or offered to a fleet)
	// since, the addresses predicted left: each launch is predicted to
	// take as many as the fewest pods of its instance types, as the VPC
	// CNI gives each pod an address (the reference's inflightIPs).
	inflight map[string]int32
	// full are the subnets a launch found without a free address
	// (InsufficientFreeAddressesInSubnet), until when they are skipped.
	full map[string]time.Time
}

type describedIPs struct {
	free int32
	at   time.Time
}

func newSubnetIPs() *subnetIPs {
	return &subnetIPs{described: map[string]describedIPs{}, inflight: map[string]int32{}, full: map[string]time.Time{}}
}

// stale are the subnets whose free addresses are unknown or older than
// SubnetIPsTTL at now.
func (s *subnetIPs) stale(subnets []awsv1.Subnet, now time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, sn := range subnets {
		if d, ok := s.described[sn.ID]; !ok || now.Sub(d.at) >= SubnetIPsTTL {
			out = append(out, sn.ID)
		}
	}
	return out
}

// observe records DescribeSubnets' counts at now: what the launches
// since predicted is now in them.
func (s *subnetIPs) observe(free map[string]int32, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, n := range free {
		s.described[id] = describedIPs{free: n, at: now}
		delete(s.inflight, id)
	}
}

// markFull skips subnet until now+ttl, its count 0 until described
// again (the reference's MarkSubnetUnavailable and UpdateICEdSubnet).
func (s *subnetIPs) markFull(subnet string, now time.Time, ttl time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.full[subnet] = now.Add(ttl)
	s.described[subnet] = describedIPs{free: 0, at: s.described[subnet].at}
	delete(s.inflight, subnet)
}

// usable are the subnets no launch found full, at now.
func (s *subnetIPs) usable(subnets []awsv1.Subnet, now time.Time) []awsv1.Subnet {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(subnets), func(sn awsv1.Subnet) bool { return now.Before(s.full[sn.ID]) })
}

// zonalSubnet is the subnet a launch uses in a zone, with the free
// addresses it was chosen for and the addresses the launch was
// predicted to take from it.
type zonalSubnet struct {
	awsv1.Subnet
	free, predicted int32
	describedAt     time.Time
}

// reserve picks, for each zone of subnets, the usable subnet with the
// most free addresses, counting the launches in flight (the first in
// the status's order at a tie), and takes from it the addresses
// predicted[zone] says the launch needs (ZonalSubnetsForLaunch).
func (s *subnetIPs) reserve(subnets []awsv1.Subnet, predicted map[string]int32, now time.Time) map[string]zonalSubnet {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]zonalSubnet{}
	for _, sn := range subnets {
		if now.Before(s.full[sn.ID]) {
			continue
		}
		free := s.described[sn.ID].free
		if n, ok := s.inflight[sn.ID]; ok {
			free = n
		}
		if cur, ok := out[sn.Zone]; ok && cur.free >= free {
			continue
		}
		out[sn.Zone] = zonalSubnet{Subnet: sn, free: free, describedAt: s.described[sn.ID].at}
	}
	for zone, zs := range out {
		zs.predicted = predicted[zone]
		s.inflight[zs.ID] = zs.free - zs.predicted
		out[zone] = zs
	}
	return out
}

// release gives back the addresses a fleet took from the subnets it did
// not launch into, unless they were described since
// (UpdateInflightIPs).
func (s *subnetIPs) release(chosen map[string]zonalSubnet, launchedIn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, zs := range chosen {
		if zs.ID == launchedIn || !s.described[zs.ID].at.Equal(zs.describedAt) {
			continue
		}
		if n, ok := s.inflight[zs.ID]; ok {
			s.inflight[zs.ID] = n + zs.predicted
		}
	}
}

// predictedIPs is, per zone, the addresses a launch over cands is
// predicted to take there: the fewest pods among its candidates in the
// zone (the reference's minPods).
func predictedIPs(cands []cloudprovider.LaunchCandidate) map[string]int32 {
	out := map[string]int32{}
	for _, c := range cands {
		pods := int32(c.InstanceType.Capacity.Pods().Value())
		if cur, ok := out[c.Offering.Zone]; !ok || pods < cur {
			out[c.Offering.Zone] = pods
		}
	}
	return out
}

// refreshSubnetIPs asks DescribeSubnets for the free addresses of the
// class's subnets not described for SubnetIPsTTL. A failure leaves the
// last counts: the launch still picks a subnet.
func (p *Provider) refreshSubnetIPs(ctx context.Context, class *awsv1.EC2NodeClass) {
	ids := p.subnets.stale(class.Status.Subnets, p.opts.Clock.Now())
	free := map[string]int32{}
	for chunk := range slices.Chunk(ids, maxFilterValues) {
		pages := ec2.NewDescribeSubnetsPaginator(p.ec2, &ec2.DescribeSubnetsInput{
			Filters: []ec2types.Filter{{Name: awssdk.String("subnet-id"), Values: chunk}},
		})
		for pages.HasMorePages() {
			out, err := pages.NextPage(ctx)
			if err != nil {
				log.FromContext(ctx).Error(fmt.Errorf("describing subnets, %w", err), "reading free addresses, using the last known", "ec2nodeclass", class.Name)
				return
			}
			for _, sn := range out.Subnets {
				free[awssdk.ToString(sn.SubnetId)] = awssdk.ToInt32(sn.AvailableIpAddressCount)
			}
		}
	}
	p.subnets.observe(free, p.opts.Clock.Now())
}
