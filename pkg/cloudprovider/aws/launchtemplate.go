package aws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// TagLaunchTemplateCluster marks the launch templates Capstan made for a
// cluster, so it can collect them.
const TagLaunchTemplateCluster = "karpenter.k8s.aws/cluster"

// amiFor is the first AMI in the NodeClass's status whose requirements
// (architecture, GPU or accelerator) the instance type meets: a label the
// type lacks fails a requirement that needs it, so a CPU type never gets
// the Nvidia or Neuron image.
func amiFor(class *awsv1.EC2NodeClass, it *cloudprovider.InstanceType) (string, bool) {
	for _, ami := range class.Status.AMIs {
		if it.Requirements.Compatible(scheduling.NewNodeSelectorRequirements(ami.Requirements...), nil) == nil {
			return ami.ID, true
		}
	}
	return "", false
}

// ensureLaunchTemplate is the name of the launch template for nc's
// NodePool on the AMI (and into the offering's reservation, when it has
// one) for the offering's capacity type and instance types of maxPods
// pods, created when it does not exist yet. The name is a hash of the
// template's data and tags, so each NodePool gets its own (its name is
// among the tags) and a changed NodeClass a new one, the old one being
// collected. Names are cached; a launch that finds a cached template gone
// forgets it (forgetTemplates), and this makes it again. Without what
// the family's user data needs of the cluster the class is not ready.
func (p *Provider) ensureLaunchTemplate(ctx context.Context, nc *v1.NodeClaim, class *awsv1.EC2NodeClass, ami string, o *cloudprovider.Offering, maxPods int32) (string, error) {
	b, why := p.opts.Cluster.Bootstrap(ctx)
	if missing := b.Missing(class.AMIFamily()); len(missing) > 0 {
		return "", cloudprovider.NewNodeClassNotReadyError(class.Name, errors.Join(fmt.Errorf("%s user data needs the cluster's %s, which could not be discovered", class.AMIFamily(), strings.Join(missing, ", ")), why))
	}
	tags := p.resourceTags(nc, class)
	data, err := p.launchTemplateData(nc, class, ami, o, nodeUserData{cluster: p.opts.ClusterName, bootstrap: b, maxPods: maxPods}, tags)
	if err != nil {
		return "", cloudprovider.NewCreateError("LaunchTemplateInvalid", fmt.Errorf("launching nodeclaim %s, %w", nc.Name, err))
	}
	tags[TagLaunchTemplateCluster] = p.opts.ClusterName
	templateTags := ec2Tags(tags)
	raw, err := json.Marshal(struct {
		Data *ec2types.RequestLaunchTemplateData
		Tags []ec2types.Tag
	}{data, templateTags})
	if err != nil {
		return "", fmt.Errorf("hashing launch template, %w", err)
	}
	sum := sha256.Sum256(raw)
	// At most 8+100+1+16 characters (EKS cluster names have up to 100),
	// within EC2's 128 and its alphabet: letters, digits, ( ) . - / _.
	name := "capstan/" + p.opts.ClusterName + "/" + hex.EncodeToString(sum[:8])
	if p.usedTemplate(name, false) {
		return name, nil
	}
	// Launches needing the same new template at once make it once.
	_, err, _ = p.ensuring.Do(name, func() (any, error) {
		return nil, p.makeLaunchTemplate(ctx, name, data, templateTags)
	})
	if err != nil {
		return "", err
	}
	p.usedTemplate(name, true)
	return name, nil
}

// usedTemplate records a launch's use of the template name now: always
// when known is set, else only when it is cached; it reports whether it
// recorded.
func (p *Provider) usedTemplate(name string, known bool) bool {
	p.templatesMu.Lock()
	defer p.templatesMu.Unlock()
	if _, cached := p.templates[name]; !cached && !known {
		return false
	}
	p.templates[name] = p.opts.Clock.Now()
	return true
}

// makeLaunchTemplate creates the launch template unless it exists.
func (p *Provider) makeLaunchTemplate(ctx context.Context, name string, data *ec2types.RequestLaunchTemplateData, tags []ec2types.Tag) error {
	out, err := p.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	if err == nil && len(out.LaunchTemplates) > 0 {
		return nil
	}
	if err != nil && !isCode(err, string(cloudprovider.CodeInvalidLaunchTemplateNameNotFound)) {
		return fmt.Errorf("describing launch template %s, %w", name, err)
	}
	_, err = p.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: awssdk.String(name), LaunchTemplateData: data,
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: tags}},
	})
	// Another launch (another replica's) may have made it meanwhile.
	if err != nil && !isCode(err, string(cloudprovider.CodeInvalidLaunchTemplateNameAlreadyExists)) {
		return apiCreateError("LaunchTemplateCreationFailed", fmt.Errorf("creating launch template %s, %w", name, err))
	}
	return nil
}

// LaunchTemplateTTL is how long a launch template may go unused before it
// is deleted. Instances keep running without theirs; a launch that needs
// one again recreates it.
const LaunchTemplateTTL = time.Hour

// collectLaunchTemplates deletes the cluster's launch templates that no
// launch has used for LaunchTemplateTTL (counting from when this process
// first saw them). A launch that picks a template as it is deleted finds
// it missing and makes it again (Create).
func (p *Provider) collectLaunchTemplates(ctx context.Context) error {
	now := p.opts.Clock.Now()
	pages := ec2.NewDescribeLaunchTemplatesPaginator(p.ec2, &ec2.DescribeLaunchTemplatesInput{
		Filters: []ec2types.Filter{{Name: awssdk.String("tag:" + TagLaunchTemplateCluster), Values: []string{p.opts.ClusterName}}},
	})
	var errs []error
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing launch templates, %w", err)
		}
		for _, lt := range out.LaunchTemplates {
			name := awssdk.ToString(lt.LaunchTemplateName)
			if !p.unusedTemplate(name, now) {
				continue
			}
			if _, err := p.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: awssdk.String(name)}); err != nil && !isCode(err, string(cloudprovider.CodeInvalidLaunchTemplateNameNotFound)) {
				errs = append(errs, fmt.Errorf("deleting launch template %s, %w", name, err))
				continue
			}
			p.templatesMu.Lock()
			delete(p.templates, name)
			p.templatesMu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// unusedTemplate reports a template no launch used for
// LaunchTemplateTTL; one first seen now is recorded.
func (p *Provider) unusedTemplate(name string, now time.Time) bool {
	p.templatesMu.Lock()
	defer p.templatesMu.Unlock()
	used, seen := p.templates[name]
	if !seen {
		p.templates[name] = now
		return false
	}
	return now.Sub(used) >= LaunchTemplateTTL
}

// launchTemplateData is what every instance of nc's NodePool on the AMI
// starts with: image, security groups or network interfaces
// (networkInterfaces), instance profile, user data, metadata options,
// block devices (the family's default ones when the class has none),
// monitoring, CPU options, placement group, the capacity reservation
// the offering launches into with its market type, or none
// (reservationSpecification), and the tags of what the launch creates
// that the fleet request cannot tag.
func (p *Provider) launchTemplateData(nc *v1.NodeClaim, class *awsv1.EC2NodeClass, ami string, o *cloudprovider.Offering, node nodeUserData, tags map[string]string) (*ec2types.RequestLaunchTemplateData, error) {
	ud, err := userData(node, nc, class)
	if err != nil {
		return nil, err
	}
	spec := class.Spec
	var groups []string
	for _, sg := range class.Status.SecurityGroups {
		groups = append(groups, sg.ID)
	}
	data := &ec2types.RequestLaunchTemplateData{
		ImageId:            awssdk.String(ami),
		UserData:           awssdk.String(ud),
		IamInstanceProfile: &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: awssdk.String(class.Status.InstanceProfile)},
		Monitoring:         &ec2types.LaunchTemplatesMonitoringRequest{Enabled: spec.DetailedMonitoring},
		MetadataOptions:    metadataOptions(spec.MetadataOptions),
	}
	data.CapacityReservationSpecification, data.InstanceMarketOptions = reservationSpecification(o)
	if data.NetworkInterfaces = networkInterfaces(spec, groups); data.NetworkInterfaces == nil {
		data.SecurityGroupIds = groups
	}
	data.CpuOptions, data.Placement = cpuOptions(spec.CPUOptions), placement(class.Status.PlacementGroup)
	// Without mappings of its own the class gets its AMI family's, as the
	// reference's resolver does (amifamily/resolver.go
	// resolveLaunchTemplates): an encrypted gp3 root volume of the size
	// the instance type's ephemeral storage was computed from, not the
	// AMI's unencrypted default.
	mappings := spec.BlockDeviceMappings
	if len(mappings) == 0 {
		mappings = defaultBlockDeviceMappings(class.AMIFamily())
	}
	for _, bdm := range mappings {
		data.BlockDeviceMappings = append(data.BlockDeviceMappings, blockDevice(bdm))
	}
	data.TagSpecifications = templateTagSpecifications(o.CapacityType, tags)
	return data, nil
}

// templateTagSpecifications tag, on create, the network interface and
// volumes every launch makes and, for spot, the spot request: the
// controller policies allow RunInstances on them only with the cluster's
// tags in the request (docs/iam), and CreateFleet's own tag
// specifications take only instance, volume and fleet. The reference tags
// the same in its launch templates (pkg/providers/launchtemplate/types.go).
func templateTagSpecifications(ct string, tags map[string]string) []ec2types.LaunchTemplateTagSpecificationRequest {
	types := []ec2types.ResourceType{ec2types.ResourceTypeNetworkInterface, ec2types.ResourceTypeVolume}
	if ct == v1.CapacityTypeSpot {
		types = append(types, ec2types.ResourceTypeSpotInstancesRequest)
	}
	list := ec2Tags(tags)
	out := make([]ec2types.LaunchTemplateTagSpecificationRequest, 0, len(types))
	for _, rt := range types {
		out = append(out, ec2types.LaunchTemplateTagSpecificationRequest{ResourceType: rt, Tags: list})
	}
	return out
}

func metadataOptions(m *awsv1.MetadataOptions) *ec2types.LaunchTemplateInstanceMetadataOptionsRequest {
	// The reference's defaults: IMDSv2 only, one hop, no IPv6. Tags stay
	// out of the instance metadata whatever the account's default says
	// (which would otherwise apply): with them in, EC2 refuses tag keys
	// containing "/" ("Work with instance tags in instance metadata"),
	// and every instance carries kubernetes.io/cluster/<name>.
	out := &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
		HttpEndpoint: "enabled", HttpProtocolIpv6: "disabled", HttpPutResponseHopLimit: awssdk.Int32(1), HttpTokens: "required",
		InstanceMetadataTags: ec2types.LaunchTemplateInstanceMetadataTagsStateDisabled,
	}
	if m == nil {
		return out
	}
	if m.HTTPEndpoint != nil {
		out.HttpEndpoint = ec2types.LaunchTemplateInstanceMetadataEndpointState(*m.HTTPEndpoint)
	}
	if m.HTTPProtocolIPv6 != nil {
		out.HttpProtocolIpv6 = ec2types.LaunchTemplateInstanceMetadataProtocolIpv6(*m.HTTPProtocolIPv6)
	}
	if m.HTTPPutResponseHopLimit != nil {
		out.HttpPutResponseHopLimit = awssdk.Int32(int32(*m.HTTPPutResponseHopLimit))
	}
	if m.HTTPTokens != nil {
		out.HttpTokens = ec2types.LaunchTemplateHttpTokensState(*m.HTTPTokens)
	}
	return out
}

func blockDevice(bdm awsv1.BlockDeviceMapping) ec2types.LaunchTemplateBlockDeviceMappingRequest {
	out := ec2types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: bdm.DeviceName}
	if e := bdm.EBS; e != nil {
		ebs := &ec2types.LaunchTemplateEbsBlockDeviceRequest{
			DeleteOnTermination: e.DeleteOnTermination, Encrypted: e.Encrypted, KmsKeyId: e.KMSKeyID, SnapshotId: e.SnapshotID,
			VolumeInitializationRate: e.VolumeInitializationRate,
		}
		if e.IOPS != nil {
			ebs.Iops = awssdk.Int32(int32(*e.IOPS))
		}
		if e.Throughput != nil {
			ebs.Throughput = awssdk.Int32(int32(*e.Throughput))
		}
		if e.VolumeSize != nil {
			// EBS sizes are whole GiB.
			ebs.VolumeSize = awssdk.Int32(int32((e.VolumeSize.Value() + 1<<30 - 1) >> 30))
		}
		if e.VolumeType != nil {
			ebs.VolumeType = ec2types.VolumeType(*e.VolumeType)
		}
		out.Ebs = ebs
	}
	return out
}

// isCode reports an EC2 API error with code.
func isCode(err error, code string) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == code
}
