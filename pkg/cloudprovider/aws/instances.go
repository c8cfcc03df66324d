package aws

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Tags Capstan puts on what it launches; Get, List and garbage collection
// find instances by them.
const (
	TagNodePool     = v1.NodePoolLabelKey
	TagNodeClaim    = "karpenter.sh/nodeclaim"
	TagNodeClass    = "karpenter.k8s.aws/ec2nodeclass"
	TagEKSCluster   = "eks:eks-cluster-name"
	clusterTagOwned = "owned"
)

// clusterTag is the tag key that marks the cluster's resources.
func (p *Provider) clusterTag() string { return "kubernetes.io/cluster/" + p.opts.ClusterName }

// liveStates are the instance states that still count: terminated and
// shutting-down instances are gone or going.
var liveStates = []string{"pending", "running", "stopping", "stopped"}

// providerID is the Node's spec.providerID for an instance.
func providerID(zone, id string) string { return "aws:///" + zone + "/" + id }

// parseProviderID is the instance id in "aws:///<zone>/<id>".
func parseProviderID(id string) (string, error) {
	rest, ok := strings.CutPrefix(id, "aws:///")
	_, instance, found := strings.Cut(rest, "/")
	if !ok || !found || !strings.HasPrefix(instance, "i-") {
		return "", fmt.Errorf("provider id %q is not aws:///<zone>/<instance-id>", id)
	}
	return instance, nil
}

// Get implements CloudProvider.
func (p *Provider) Get(ctx context.Context, id string) (*v1.NodeClaim, error) {
	instance, err := parseProviderID(id)
	if err != nil {
		return nil, cloudprovider.NewNodeClaimNotFoundError(id, err)
	}
	inst, err := p.describe(ctx, id, instance)
	if err != nil {
		return nil, err
	}
	return p.toNodeClaim(ctx, inst), nil
}

// describe is the live instance with id (provider id pid), or a
// NodeClaimNotFoundError.
func (p *Provider) describe(ctx context.Context, pid, id string) (ec2types.Instance, error) {
	out, err := p.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if isNotFound(err) {
		return ec2types.Instance{}, cloudprovider.NewNodeClaimNotFoundError(pid, fmt.Errorf("instance %s not found", id))
	}
	if err != nil {
		return ec2types.Instance{}, fmt.Errorf("describing instance %s, %w", id, err)
	}
	for _, r := range out.Reservations {
		for _, inst := range r.Instances {
			if awssdk.ToString(inst.InstanceId) == id && live(inst) {
				return inst, nil
			}
		}
	}
	return ec2types.Instance{}, cloudprovider.NewNodeClaimNotFoundError(pid, fmt.Errorf("instance %s is terminated", id))
}

// live reports whether inst still counts (liveStates).
func live(inst ec2types.Instance) bool {
	return inst.State != nil && slices.Contains(liveStates, string(inst.State.Name))
}

// isNotFound reports EC2's error for an instance id it does not know.
func isNotFound(err error) bool { return isCode(err, "InvalidInstanceID.NotFound") }

// List implements CloudProvider: the cluster's live instances that a
// NodePool launched.
func (p *Provider) List(ctx context.Context) ([]*v1.NodeClaim, error) {
	insts, err := p.list(ctx, ec2types.Filter{Name: awssdk.String("tag-key"), Values: []string{TagNodePool}})
	if err != nil {
		return nil, err
	}
	out := make([]*v1.NodeClaim, 0, len(insts))
	for _, inst := range insts {
		out = append(out, p.toNodeClaim(ctx, inst))
	}
	return out, nil
}

// list is the cluster's live instances that also match filters.
func (p *Provider) list(ctx context.Context, filters ...ec2types.Filter) ([]ec2types.Instance, error) {
	filters = append(filters,
		ec2types.Filter{Name: awssdk.String("tag:" + p.clusterTag()), Values: []string{clusterTagOwned}},
		ec2types.Filter{Name: awssdk.String("instance-state-name"), Values: liveStates})
	var out []ec2types.Instance
	pages := ec2.NewDescribeInstancesPaginator(p.ec2, &ec2.DescribeInstancesInput{Filters: filters})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing instances, %w", err)
		}
		for _, r := range page.Reservations {
			for _, inst := range r.Instances {
				if live(inst) {
					out = append(out, inst)
				}
			}
		}
	}
	return out, nil
}

// Delete implements CloudProvider: terminates the instance, and reports
// it not found once it is terminated (or unknown).
func (p *Provider) Delete(ctx context.Context, nc *v1.NodeClaim) error {
	pid := nc.Status.ProviderID
	id, err := parseProviderID(pid)
	if err != nil {
		return cloudprovider.NewNodeClaimNotFoundError(pid, err)
	}
	inst, err := p.describe(ctx, pid, id)
	if err != nil {
		return err
	}
	if inst.State.Name == ec2types.InstanceStateNameShuttingDown {
		return nil
	}
	if _, err := p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		if isNotFound(err) {
			return cloudprovider.NewNodeClaimNotFoundError(pid, err)
		}
		return fmt.Errorf("terminating instance %s, %w", id, err)
	}
	return nil
}

// toNodeClaim describes an instance as a NodeClaim: its labels, provider
// id, image and, where the catalog knows its type, capacity.
func (p *Provider) toNodeClaim(ctx context.Context, inst ec2types.Instance) *v1.NodeClaim {
	tags := map[string]string{}
	for _, t := range inst.Tags {
		tags[awssdk.ToString(t.Key)] = awssdk.ToString(t.Value)
	}
	zone := awssdk.ToString(inst.Placement.AvailabilityZone)
	nc := &v1.NodeClaim{}
	nc.Name = tags[TagNodeClaim]
	nc.CreationTimestamp = metav1.NewTime(awssdk.ToTime(inst.LaunchTime))
	nc.Status.ProviderID = providerID(zone, awssdk.ToString(inst.InstanceId))
	nc.Status.ImageID = awssdk.ToString(inst.ImageId)
	nc.Labels = map[string]string{}
	name := string(inst.InstanceType)
	p.mu.RLock()
	c := p.catalog
	p.mu.RUnlock()
	if c == nil {
		c, _ = p.loadedCatalog(ctx)
	}
	if c != nil {
		if m, ok := c.types[name]; ok {
			// The instance's NodeClass is not at hand: its labels, which
			// are the type's, do not depend on it; capacity is the
			// defaults'.
			it := instanceType(m.info, &awsv1.EC2NodeClass{}, p.opts, p.bandwidth)
			maps.Copy(nc.Labels, it.Requirements.Labels())
			nc.Status.Capacity, nc.Status.Allocatable = it.Capacity, it.Allocatable()
		}
	}
	if id := awssdk.ToString(inst.Placement.AvailabilityZoneId); id != "" {
		nc.Labels[v1.LabelZoneID] = id
	}
	nc.Labels[v1.LabelInstanceType] = name
	nc.Labels[v1.LabelZone] = zone
	nc.Labels[v1.LabelRegion] = p.opts.Region
	nc.Labels[v1.CapacityTypeLabelKey] = capacityTypeOf(inst)
	if id := awssdk.ToString(inst.CapacityReservationId); id != "" {
		// The instance's lifecycle says which kind of reservation it runs
		// in, as the reference reads it (instance/types.go NewInstance).
		o := cloudprovider.Offering{ReservationID: id, ReservationType: v1.ReservationTypeDefault,
			ReservationInterruptible: inst.InstanceLifecycle == ec2types.InstanceLifecycleTypeInterruptibleCapacityReservation}
		if inst.InstanceLifecycle == ec2types.InstanceLifecycleTypeCapacityBlock {
			o.ReservationType = v1.ReservationTypeCapacityBlock
		}
		maps.Copy(nc.Labels, o.ReservationLabels())
	}
	if nc.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeSpot {
		nc.Labels[v1.InterruptibleLabelKey] = "true"
	}
	if np := tags[TagNodePool]; np != "" {
		nc.Labels[v1.NodePoolLabelKey] = np
	}
	return nc
}

// capacityTypeOf: spot by lifecycle, reserved when the instance runs in a
// capacity reservation (only reserved launches target one: the others'
// launch templates opt out), else on-demand.
func capacityTypeOf(inst ec2types.Instance) string {
	switch {
	case inst.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot:
		return v1.CapacityTypeSpot
	case awssdk.ToString(inst.CapacityReservationId) != "":
		return v1.CapacityTypeReserved
	default:
		return v1.CapacityTypeOnDemand
	}
}
