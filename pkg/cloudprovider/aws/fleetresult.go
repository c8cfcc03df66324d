package aws

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// isTemplateMissing reports a CreateFleet refused because a launch
// template it names does not exist.
func isTemplateMissing(err error) bool {
	return isCode(err, string(cloudprovider.CodeInvalidLaunchTemplateNameNotFound)) || isCode(err, string(cloudprovider.CodeInvalidLaunchTemplateIDNotFound))
}

// isTemplateMissingCode reports EC2's codes for a launch template that
// does not exist, named by name or by id (the reference's
// pkg/errors/errors.go lists both as not-found).
func isTemplateMissingCode(code string) bool {
	switch cloudprovider.LaunchErrorCode(code) {
	case cloudprovider.CodeInvalidLaunchTemplateNameNotFound, cloudprovider.CodeInvalidLaunchTemplateIDNotFound:
		return true
	}
	return false
}

// forgetTemplates drops the fleet's launch templates from the cache, so
// the next ensureLaunchTemplate describes them again and makes the
// missing ones.
func (p *Provider) forgetTemplates(in *ec2.CreateFleetInput) {
	p.templatesMu.Lock()
	defer p.templatesMu.Unlock()
	for _, cfg := range in.LaunchTemplateConfigs {
		if spec := cfg.LaunchTemplateSpecification; spec != nil {
			delete(p.templates, awssdk.ToString(spec.LaunchTemplateName))
		}
	}
}

// forgetMissingTemplates drops from the cache the launch templates a
// fleet's per-override errors say do not exist: EC2 answers those beside
// the fleet's other outcomes rather than refusing the call, so they are
// made again on the NodeClaim's next attempt (each attempt a new request,
// launch.go's fleet).
func (p *Provider) forgetMissingTemplates(errs []ec2types.CreateFleetError) {
	p.templatesMu.Lock()
	defer p.templatesMu.Unlock()
	for _, e := range errs {
		code := awssdk.ToString(e.ErrorCode)
		if lto := e.LaunchTemplateAndOverrides; lto != nil && lto.LaunchTemplateSpecification != nil && isTemplateMissingCode(code) {
			delete(p.templates, awssdk.ToString(lto.LaunchTemplateSpecification.LaunchTemplateName))
		}
	}
}

// launchedAs is the candidate a fleet instance was launched as: by type
// and subnet, the subnet being the answer's SubnetId or, in answers
// without it (the field entered the EC2 model in ec2 SDK v1.315.0), the
// echoed override's; else by type and zone, the echoed override's
// AvailabilityZone as the reference reads it (instance.go
// NewInstanceFromFleet) or the answer's. Capstan's overrides use one
// subnet per zone, so a type and a zone name one candidate.
func launchedAs(inst ec2types.CreateFleetInstance, byOverride map[string]cloudprovider.LaunchCandidate) (cloudprovider.LaunchCandidate, bool) {
	var echoed *ec2types.FleetLaunchTemplateOverrides
	if lto := inst.LaunchTemplateAndOverrides; lto != nil {
		echoed = lto.Overrides
	}
	subnet, zone := awssdk.ToString(inst.SubnetId), awssdk.ToString(inst.AvailabilityZone)
	if echoed != nil {
		subnet = cmp.Or(subnet, awssdk.ToString(echoed.SubnetId))
		zone = cmp.Or(awssdk.ToString(echoed.AvailabilityZone), zone)
	}
	if subnet != "" {
		cand, ok := byOverride[overrideKey(string(inst.InstanceType), subnet)]
		return cand, ok
	}
	for _, cand := range byOverride {
		if zone != "" && cand.InstanceType.Name == string(inst.InstanceType) && cand.Offering.Zone == zone {
			return cand, true
		}
	}
	return cloudprovider.LaunchCandidate{}, false
}

// unexpectedFleetResult terminates instances the fleet launched as none
// of the overrides Capstan asked for: no NodeClaim could own them, and
// left running they would leak until garbage collection found them.
func (p *Provider) unexpectedFleetResult(ctx context.Context, nc *v1.NodeClaim, inst ec2types.CreateFleetInstance) error {
	err := fmt.Errorf("launching nodeclaim %s, the fleet launched %s as an override it was not asked for (subnet %q, zone %q), so it was terminated",
		nc.Name, inst.InstanceType, awssdk.ToString(inst.SubnetId), awssdk.ToString(inst.AvailabilityZone))
	if _, terr := p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: inst.InstanceIds}); terr != nil {
		err = errors.Join(err, fmt.Errorf("terminating instances %v, %w", inst.InstanceIds, terr))
	}
	return cloudprovider.NewCreateError("UnexpectedFleetResult", err)
}
