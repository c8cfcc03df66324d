package aws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Annotations a NodeClaim gets at launch: the hash of its EC2NodeClass's
// static fields, which IsDrifted compares with the NodeClass's now.
const (
	NodeClassHashAnnotationKey        = "karpenter.k8s.aws/ec2nodeclass-hash"
	NodeClassHashVersionAnnotationKey = "karpenter.k8s.aws/ec2nodeclass-hash-version"
	// NodeClassHashVersion changes when the hash's inputs do, so nodes
	// launched under another version are not all judged drifted.
	NodeClassHashVersion = "v1"
)

// Drift reasons.
const (
	DriftAMI           cloudprovider.DriftReason = "AMIDrift"
	DriftSubnet        cloudprovider.DriftReason = "SubnetDrift"
	DriftSecurityGroup cloudprovider.DriftReason = "SecurityGroupDrift"
	DriftNodeClass     cloudprovider.DriftReason = "NodeClassDrift"
)

// NodeClassHash hashes the NodeClass's static fields: everything but the
// selector terms, whose results IsDrifted checks one by one.
func NodeClassHash(spec awsv1.EC2NodeClassSpec) string {
	spec.AMISelectorTerms, spec.SubnetSelectorTerms, spec.SecurityGroupSelectorTerms, spec.CapacityReservationSelectorTerms = nil, nil, nil, nil
	raw, _ := json.Marshal(spec)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// IsDrifted implements CloudProvider: the instance's AMI, subnet or
// security groups are no longer what its NodeClass resolves to, or the
// NodeClass's static fields changed since the launch.
func (p *Provider) IsDrifted(ctx context.Context, nc *v1.NodeClaim) (cloudprovider.DriftReason, error) {
	class, err := p.nodeClass(ctx, nc.Spec.NodeClassRef)
	if err != nil {
		return "", cloudprovider.IgnoreNodeClassNotReady(err)
	}
	if h, ok := nc.Annotations[NodeClassHashAnnotationKey]; ok && nc.Annotations[NodeClassHashVersionAnnotationKey] == NodeClassHashVersion && h != NodeClassHash(class.Spec) {
		return DriftNodeClass, nil
	}
	id, err := parseProviderID(nc.Status.ProviderID)
	if err != nil {
		return "", nil
	}
	inst, err := p.describe(ctx, nc.Status.ProviderID, id)
	if err != nil {
		return "", cloudprovider.IgnoreNodeClaimNotFound(err)
	}
	if !slices.ContainsFunc(class.Status.AMIs, func(a awsv1.AMI) bool { return a.ID == awssdk.ToString(inst.ImageId) }) {
		return DriftAMI, nil
	}
	if !slices.ContainsFunc(class.Status.Subnets, func(s awsv1.Subnet) bool { return s.ID == awssdk.ToString(inst.SubnetId) }) {
		return DriftSubnet, nil
	}
	var want, got []string
	for _, sg := range class.Status.SecurityGroups {
		want = append(want, sg.ID)
	}
	for _, g := range inst.SecurityGroups {
		got = append(got, awssdk.ToString(g.GroupId))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		return DriftSecurityGroup, nil
	}
	return "", nil
}
