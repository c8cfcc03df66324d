package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/log"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Create implements CloudProvider: one instant fleet over the offerings
// CloudProvider.Create's contract picks (cloudprovider.LaunchCandidates),
// each override an instance type × a subnet of its zone, under the launch
// template of its AMI (and reservation). A NodeClaim that already has a
// live instance gets it back. Launches run side by side: locks are held
// around the provider's shared state only, never across an EC2 call, and
// identical requests within a short window go out as one fleet
// (fleetBatcher). Two Creates of one NodeClaim at once share one launch.
func (p *Provider) Create(ctx context.Context, nc *v1.NodeClaim) (*v1.NodeClaim, error) {
	got, err, shared := p.launching.Do(nc.Name, func() (any, error) { return p.create(ctx, nc) })
	if err != nil {
		return nil, err
	}
	out := got.(*v1.NodeClaim)
	if shared {
		out = out.DeepCopy()
	}
	return out, nil
}

func (p *Provider) create(ctx context.Context, nc *v1.NodeClaim) (*v1.NodeClaim, error) {
	class, err := p.nodeClass(ctx, nc.Spec.NodeClassRef)
	if err != nil {
		return nil, err
	}
	c, err := p.loadedCatalog(ctx)
	if err != nil {
		return nil, err
	}
	existing, err := p.list(ctx, ec2types.Filter{Name: awssdk.String("tag:" + TagNodeClaim), Values: []string{nc.Name}})
	if err != nil {
		return nil, err
	}
	if len(existing) > 0 {
		return p.launched(ctx, nc, class, existing[0]), nil
	}
	p.mu.RLock()
	its := p.instanceTypes(c, class)
	p.mu.RUnlock()
	if p.opts.Unavailable != nil {
		its = p.opts.Unavailable.Apply(its)
	}
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(nc.Spec.Requirements...)
	ct, cands := cloudprovider.LaunchCandidates(its, reqs, nc.Spec.Resources.Requests)
	if len(cands) == 0 {
		return nil, cloudprovider.NoLaunchCandidates(nc.Name, its, reqs, nc.Spec.Resources.Requests)
	}
	if ct == v1.CapacityTypeReserved {
		cands = oneFleetOfReservations(cands)
	}
	p.refreshSubnetIPs(ctx, class)
	fleet, byOverride, subnets, err := p.fleet(ctx, nc, class, ct, cands)
	if err != nil {
		return nil, err
	}
	share := p.fleets.createFleet(ctx, fleet)
	if isTemplateMissing(share.err) {
		// Deleted outside Capstan since it was cached: made again, at
		// once, as the reference retries once.
		p.forgetTemplates(fleet)
		p.subnets.release(subnets, "")
		if fleet, byOverride, subnets, err = p.fleet(ctx, nc, class, ct, cands); err != nil {
			return nil, err
		}
		share = p.fleets.createFleet(ctx, fleet)
	}
	if share.err != nil {
		p.subnets.release(subnets, "")
		return nil, apiCreateError("CreateFleetFailed", fmt.Errorf("launching nodeclaim %s, %w", nc.Name, share.err))
	}
	out := share.out
	p.forgetMissingTemplates(out.Errors)
	errs, full := p.markFullSubnets(out.Errors)
	for _, inst := range out.Instances {
		if len(inst.InstanceIds) == 0 {
			continue
		}
		cand, ok := launchedAs(inst, byOverride)
		if !ok {
			p.subnets.release(subnets, "")
			return nil, p.unexpectedFleetResult(ctx, nc, inst)
		}
		p.subnets.release(subnets, subnets[cand.Offering.Zone].ID)
		if share.batched {
			p.tagNodeClaim(ctx, nc, inst.InstanceIds[0])
		}
		p.booked(cand)
		p.markFailed(nc, errs, byOverride)
		return p.created(ctx, nc, class, cand, inst.InstanceIds[0]), nil
	}
	p.subnets.release(subnets, "")
	if len(errs) == 0 && len(full) > 0 {
		// Only subnets were full: the next launch takes the zones'
		// next subnets, whatever the offering.
		return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("launching nodeclaim %s, %s in subnets %v", nc.Name, cloudprovider.CodeInsufficientFreeAddressesInSubnet, full))
	}
	return nil, fleetErrors(nc, errs, byOverride)
}

// markFullSubnets marks the subnets a fleet found without a free address
// (InsufficientFreeAddressesInSubnet,
// docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html),
// so the zones' launches take their next subnets, and returns the other
// errors and those subnets. The offering is not marked: the instance
// type has capacity, the subnet has no address (the reference marks
// both, docs/aws.md "Subnets").
func (p *Provider) markFullSubnets(errs []ec2types.CreateFleetError) ([]ec2types.CreateFleetError, []string) {
	var rest []ec2types.CreateFleetError
	var full []string
	ttl := cloudprovider.DefaultUnavailableOfferingsTTL
	if p.opts.Unavailable != nil {
		ttl = p.opts.Unavailable.TTL()
	}
	for _, e := range errs {
		var subnet string
		if lto := e.LaunchTemplateAndOverrides; lto != nil && lto.Overrides != nil {
			subnet = awssdk.ToString(lto.Overrides.SubnetId)
		}
		if awssdk.ToString(e.ErrorCode) != string(cloudprovider.CodeInsufficientFreeAddressesInSubnet) || subnet == "" {
			rest = append(rest, e)
			continue
		}
		if !slices.Contains(full, subnet) {
			full = append(full, subnet)
			p.subnets.markFull(subnet, p.opts.Clock.Now(), ttl)
		}
	}
	return rest, full
}

// fleet is the CreateFleet request for the candidates, and which
// candidate each override (type × subnet) stands for.
// Each zone's subnet is the one with the most free addresses, launches
// in flight counted (subnetIPs.reserve); the caller releases them.
func (p *Provider) fleet(ctx context.Context, nc *v1.NodeClaim, class *awsv1.EC2NodeClass, ct string, cands []cloudprovider.LaunchCandidate) (*ec2.CreateFleetInput, map[string]cloudprovider.LaunchCandidate, map[string]zonalSubnet, error) {
	zonal := p.subnets.reserve(class.Status.Subnets, predictedIPs(cands), p.opts.Clock.Now())
	in, byOverride, err := p.fleetOver(ctx, nc, class, ct, cands, zonal)
	if err != nil {
		p.subnets.release(zonal, "")
		return nil, nil, nil, err
	}
	return in, byOverride, zonal, nil
}

// fleetOver is the CreateFleet request for the candidates over the
// zones' subnets.
func (p *Provider) fleetOver(ctx context.Context, nc *v1.NodeClaim, class *awsv1.EC2NodeClass, ct string, cands []cloudprovider.LaunchCandidate, zonal map[string]zonalSubnet) (*ec2.CreateFleetInput, map[string]cloudprovider.LaunchCandidate, error) {
	subnets := map[string]string{}
	for zone, zs := range zonal {
		subnets[zone] = zs.ID
	}
	byOverride := map[string]cloudprovider.LaunchCandidate{}
	configs := map[string]*ec2types.FleetLaunchTemplateConfigRequest{}
	maxPrice := fleetMaxPrice(class, ct)
	for _, cand := range cands {
		subnet, ok := subnets[cand.Offering.Zone]
		if !ok {
			continue
		}
		ami, ok := amiFor(class, cand.InstanceType)
		if !ok {
			continue
		}
		// A template per pod limit, as the reference groups types by it.
		name, err := p.ensureLaunchTemplate(ctx, nc, class, ami, cand.Offering, int32(cand.InstanceType.Capacity.Pods().Value()))
		if err != nil {
			return nil, nil, err
		}
		cfg := configs[name]
		if cfg == nil {
			cfg = &ec2types.FleetLaunchTemplateConfigRequest{LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{
				LaunchTemplateName: awssdk.String(name), Version: awssdk.String("$Latest"),
			}}
			configs[name] = cfg
		}
		key := overrideKey(cand.InstanceType.Name, subnet)
		if _, dup := byOverride[key]; dup {
			continue
		}
		byOverride[key] = cand
		cfg.Overrides = append(cfg.Overrides, ec2types.FleetLaunchTemplateOverridesRequest{
			InstanceType: ec2types.InstanceType(cand.InstanceType.Name), SubnetId: awssdk.String(subnet), AvailabilityZone: awssdk.String(cand.Offering.Zone),
			MaxPrice: maxPrice,
		})
	}
	if len(byOverride) == 0 {
		return nil, nil, cloudprovider.NewCreateError("NoLaunchableOffering", fmt.Errorf("launching nodeclaim %s, no candidate offering has a usable subnet and an AMI in its NodeClass's status", nc.Name))
	}
	in := &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		// No ClientToken: the SDK makes one per call and keeps it for its
		// own retries of that call, so a retried request is idempotent
		// while each new attempt is a new request. A fixed token would get
		// a failed attempt's answer replayed, or IdempotentParameterMismatch
		// once the overrides change. Create's listing of the NodeClaim's
		// instances before launching is what keeps a retry after a crash
		// from launching twice (docs/controller.md, "Launch errors").
		TagSpecifications: p.tagSpecifications(nc, class),
		// A reserved-capacity context, for users whose fleets need one.
		Context: class.Spec.Context,
	}
	// The candidates are of one kind of reservation when reserved
	// (oneFleetOfReservations).
	setCapacity(in, ct, kindOf(cands[0].Offering))
	for _, name := range slices.Sorted(maps.Keys(configs)) {
		in.LaunchTemplateConfigs = append(in.LaunchTemplateConfigs, *configs[name])
	}
	return in, byOverride, nil
}

func overrideKey(instanceType, subnet string) string { return instanceType + "/" + subnet }

// resourceTags are the tags of everything Capstan creates for nc's
// NodePool: the NodeClass's tags and the ones that identify the cluster,
// NodePool and NodeClass (which win). The controller policies condition
// creation and deletion on them (docs/iam).
func (p *Provider) resourceTags(nc *v1.NodeClaim, class *awsv1.EC2NodeClass) map[string]string {
	tags := maps.Clone(class.Spec.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	maps.Copy(tags, map[string]string{
		p.clusterTag(): clusterTagOwned, TagEKSCluster: p.opts.ClusterName,
		TagNodePool: nc.Labels[v1.NodePoolLabelKey], TagNodeClass: class.Name,
	})
	return tags
}

// ec2Tags is tags as EC2's list, sorted by key.
func ec2Tags(tags map[string]string) []ec2types.Tag {
	var list []ec2types.Tag
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		list = append(list, ec2types.Tag{Key: awssdk.String(k), Value: awssdk.String(tags[k])})
	}
	return list
}

// fleetTagTypes are the resource types a CreateFleet request tags: the
// instance, its volumes and the fleet, as the reference does
// (pkg/providers/instance/types.go); the network interface and spot
// request are tagged by the launch template's data.
var fleetTagTypes = []ec2types.ResourceType{ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeFleet}

// tagSpecifications tag the instance, its volumes and the fleet with
// resourceTags and the NodeClaim's name.
func (p *Provider) tagSpecifications(nc *v1.NodeClaim, class *awsv1.EC2NodeClass) []ec2types.TagSpecification {
	tags := p.resourceTags(nc, class)
	tags[TagNodeClaim] = nc.Name
	list := ec2Tags(tags)
	var out []ec2types.TagSpecification
	for _, rt := range fleetTagTypes {
		out = append(out, ec2types.TagSpecification{ResourceType: rt, Tags: list})
	}
	return out
}

// fleetErrors turns a fleet's per-override errors into the launch's error
// (cloudprovider.NewLaunchError): an InsufficientCapacityError when every
// error is a capacity or spot-only one, else a CreateError with the first
// refusal's code; capacity errors are marked in either case. An error on
// an override that was not asked for is a refusal, as nothing can be
// marked for it.
func fleetErrors(nc *v1.NodeClaim, errs []ec2types.CreateFleetError, byOverride map[string]cloudprovider.LaunchCandidate) error {
	if len(errs) == 0 {
		return cloudprovider.NewCreateError("CreateFleetFailed", fmt.Errorf("launching nodeclaim %s, the fleet launched nothing and reported no error", nc.Name))
	}
	var out []cloudprovider.OfferingError
	for _, e := range errs {
		code, msg := awssdk.ToString(e.ErrorCode), awssdk.ToString(e.ErrorMessage)
		var key string
		if lto := e.LaunchTemplateAndOverrides; lto != nil && lto.Overrides != nil {
			key = overrideKey(string(lto.Overrides.InstanceType), awssdk.ToString(lto.Overrides.SubnetId))
		}
		cand, known := byOverride[key]
		if !known {
			out = append(out, cloudprovider.OfferingError{Code: "UnexpectedFleetResult", Message: fmt.Sprintf("%s: %s (on override %s, which was not asked for)", code, msg, key)})
			continue
		}
		out = append(out, cloudprovider.OfferingError{Offering: cand.Offering.Key(cand.InstanceType.Name), Code: code, Message: msg})
	}
	return cloudprovider.NewLaunchError(out, fmt.Errorf("launching nodeclaim %s", nc.Name))
}

// markFailed marks unavailable the offerings a fleet that launched found
// without capacity (and spot, for a spot-only code), as the reference
// does whatever the fleet's outcome (instance.go
// updateUnavailableOfferingsCache): the launch succeeded, so no error
// carries them to the caller's cache.
func (p *Provider) markFailed(nc *v1.NodeClaim, errs []ec2types.CreateFleetError, byOverride map[string]cloudprovider.LaunchCandidate) {
	if len(errs) == 0 || p.opts.Unavailable == nil {
		return
	}
	p.opts.Unavailable.MarkFromError(fleetErrors(nc, errs, byOverride))
}

// apiCreateError is a failed EC2 call as a launch error: a refusal with
// EC2's code when it gave one, else a CreateError with reason.
func apiCreateError(reason string, err error) error {
	if apiErr, ok := errors.AsType[smithy.APIError](err); ok && apiErr.ErrorCode() != "" {
		return cloudprovider.NewCloudCreateError(apiErr.ErrorCode(), err)
	}
	return cloudprovider.NewCreateError(reason, err)
}

// booked counts a launch into a reservation until the next Refresh sees
// it.
func (p *Provider) booked(cand cloudprovider.LaunchCandidate) {
	if cand.Offering.ReservationID == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.catalog.reserved[cand.Offering.ReservationID]; r != nil {
		r.launched++
	}
}

// tagNodeClaim names its NodeClaim on an instance a fleet of several
// launched (the request could not: the tag differs per NodeClaim), as the
// reference's tagging controller does later (pkg/controllers/nodeclaim/
// tagging). EC2 is eventually consistent, so a new instance may be
// unknown to CreateTags for a moment: NotFound is retried. A failure is
// logged, not returned: the instance is the NodeClaim's by its provider
// id; only a Create retried after a crash would miss it by tag, and
// garbage collection terminates the one it leaves.
func (p *Provider) tagNodeClaim(ctx context.Context, nc *v1.NodeClaim, id string) {
	err := retry.OnError(retry.DefaultBackoff, isNotFound, func() error {
		_, err := p.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: []ec2types.Tag{{Key: awssdk.String(TagNodeClaim), Value: awssdk.String(nc.Name)}}})
		return err
	})
	if err != nil {
		log.FromContext(ctx).Error(err, "tagging a batched fleet's instance with its nodeclaim", "instance", id)
	}
}

// created is what Create returns for instance id launched as cand: nc
// with the instance's status and labels.
func (p *Provider) created(ctx context.Context, nc *v1.NodeClaim, class *awsv1.EC2NodeClass, cand cloudprovider.LaunchCandidate, id string) *v1.NodeClaim {
	out := nc.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	maps.Copy(out.Labels, cand.InstanceType.Requirements.Labels())
	o := cand.Offering
	out.Labels[v1.LabelInstanceType] = cand.InstanceType.Name
	out.Labels[v1.LabelZone] = o.Zone
	out.Labels[v1.LabelRegion] = p.opts.Region
	out.Labels[v1.CapacityTypeLabelKey] = o.CapacityType
	if o.ZoneID != "" {
		out.Labels[v1.LabelZoneID] = o.ZoneID
	}
	maps.Copy(out.Labels, o.ReservationLabels())
	if o.CapacityType == v1.CapacityTypeSpot {
		out.Labels[v1.InterruptibleLabelKey] = "true"
	}
	out.Status.ProviderID = providerID(o.Zone, id)
	out.Status.Capacity, out.Status.Allocatable = cand.InstanceType.Capacity, cand.InstanceType.Allocatable()
	p.stampHash(ctx, out, class)
	return out
}

// stampHash records the NodeClass's static hash on a launched NodeClaim,
// computed now as the reference does at launch (drift.go).
func (p *Provider) stampHash(ctx context.Context, nc *v1.NodeClaim, class *awsv1.EC2NodeClass) {
	if nc.Annotations == nil {
		nc.Annotations = map[string]string{}
	}
	// The launch already needed the bootstrap, which is cached; a CA
	// bundle that cannot be told hashes as the reference's absent one.
	b, _ := p.opts.Cluster.Bootstrap(ctx)
	maps.Copy(nc.Annotations, HashAnnotations(class, b.CABundle))
}

// launched is what Create returns for an instance already running for nc.
func (p *Provider) launched(ctx context.Context, nc *v1.NodeClaim, class *awsv1.EC2NodeClass, inst ec2types.Instance) *v1.NodeClaim {
	got := p.toNodeClaim(ctx, inst)
	out := nc.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	maps.Copy(out.Labels, got.Labels)
	out.Status = got.Status
	p.stampHash(ctx, out, class)
	return out
}
