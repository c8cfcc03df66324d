package aws

import (
	"context"
	"slices"
	"strconv"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/mitchellh/hashstructure/v2"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Annotations of the EC2NodeClass (stamped by its controller) and of each
// NodeClaim launched from it: the hash of the class's static fields, and
// the hash's version. IsDrifted compares the two hashes when the versions
// match, as the reference does, so a NodeClaim a Karpenter install
// launched is judged by the same hash.
const (
	NodeClassHashAnnotationKey        = "karpenter.k8s.aws/ec2nodeclass-hash"
	NodeClassHashVersionAnnotationKey = "karpenter.k8s.aws/ec2nodeclass-hash-version"
	// NodeClassHashVersion is the reference's EC2NodeClassHashVersion at
	// v1.14.1 (pkg/apis/v1/ec2nodeclass.go), since NodeClassHash is its
	// hash: it must change exactly when the reference's does.
	NodeClassHashVersion = "v5"
)

// Drift reasons, the reference's (pkg/cloudprovider/drift.go).
const (
	DriftAMI                 cloudprovider.DriftReason = "AMIDrift"
	DriftSubnet              cloudprovider.DriftReason = "SubnetDrift"
	DriftSecurityGroup       cloudprovider.DriftReason = "SecurityGroupDrift"
	DriftCapacityReservation cloudprovider.DriftReason = "CapacityReservationDrift"
	DriftPlacementGroup      cloudprovider.DriftReason = "PlacementGroupDrift"
	DriftNodeClass           cloudprovider.DriftReason = "NodeClassDrift"
)

// NodeClassHash is the reference's EC2NodeClass hash (EC2NodeClass.Hash,
// pkg/apis/v1/ec2nodeclass.go at v1.14.1): hashstructure's FormatV2 of
// the spec (without the fields tagged hash:"ignore": the selector terms,
// whose results drift on their own, ipPrefixCount and amiFamily), the
// resolved AMI family (so writing out the family an alias implies is no
// change) and the cluster's CA bundle, with slices as sets and zero and
// nil values ignored, in decimal. The API types carry the reference's Go
// field names and hash tags, which the hash covers.
func NodeClassHash(class *awsv1.EC2NodeClass, caBundle string) string {
	h, err := hashstructure.Hash([]any{class.Spec, class.AMIFamily(), caBundle}, hashstructure.FormatV2,
		&hashstructure.HashOptions{SlicesAsSets: true, IgnoreZeroValue: true, ZeroNil: true})
	if err != nil {
		// Unreachable: the spec holds no channels, funcs or complex
		// numbers, the only kinds hashstructure refuses.
		panic(err)
	}
	return strconv.FormatUint(h, 10)
}

// HashAnnotations are the annotations NodeClassHash stamps.
func HashAnnotations(class *awsv1.EC2NodeClass, caBundle string) map[string]string {
	return map[string]string{
		NodeClassHashAnnotationKey:        NodeClassHash(class, caBundle),
		NodeClassHashVersionAnnotationKey: NodeClassHashVersion,
	}
}

// IsDrifted implements CloudProvider: Drift on the claim, its class and
// the instance.
func (p *Provider) IsDrifted(ctx context.Context, nc *v1.NodeClaim) (cloudprovider.DriftReason, error) {
	class, err := p.nodeClass(ctx, nc.Spec.NodeClassRef)
	if err != nil {
		return "", cloudprovider.IgnoreNodeClassNotReady(err)
	}
	// The hashes first: they need no EC2 call.
	if r := staticDrift(nc, class); r != "" {
		return r, nil
	}
	id, err := parseProviderID(nc.Status.ProviderID)
	if err != nil {
		return "", nil
	}
	inst, err := p.describe(ctx, nc.Status.ProviderID, id)
	if err != nil {
		return "", cloudprovider.IgnoreNodeClaimNotFound(err)
	}
	return instanceDrift(class, inst), nil
}

// Drift is why the instance of nc is no longer what its class launches,
// in the reference's order: the class's static fields (its hash
// annotation against the claim's, when both carry one of the same
// version), the image, the security groups, the subnet, a capacity
// reservation the class no longer selects, and a placement group other
// than the class's (or none). "" when none.
func Drift(nc *v1.NodeClaim, class *awsv1.EC2NodeClass, inst ec2types.Instance) cloudprovider.DriftReason {
	if r := staticDrift(nc, class); r != "" {
		return r
	}
	return instanceDrift(class, inst)
}

// instanceDrift is Drift but for the static fields.
func instanceDrift(class *awsv1.EC2NodeClass, inst ec2types.Instance) cloudprovider.DriftReason {
	if !slices.ContainsFunc(class.Status.AMIs, func(a awsv1.AMI) bool { return a.ID == awssdk.ToString(inst.ImageId) }) {
		return DriftAMI
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
		return DriftSecurityGroup
	}
	if !slices.ContainsFunc(class.Status.Subnets, func(s awsv1.Subnet) bool { return s.ID == awssdk.ToString(inst.SubnetId) }) {
		return DriftSubnet
	}
	if cr := awssdk.ToString(inst.CapacityReservationId); cr != "" &&
		!slices.ContainsFunc(class.Status.CapacityReservations, func(r awsv1.CapacityReservation) bool { return r.ID == cr }) {
		return DriftCapacityReservation
	}
	// The reference compares the group recorded on the NodeClaim; the
	// instance's own placement says the same.
	group, instGroup := "", ""
	if class.Status.PlacementGroup != nil {
		group = class.Status.PlacementGroup.ID
	}
	if inst.Placement != nil {
		instGroup = awssdk.ToString(inst.Placement.GroupId)
	}
	if group != instGroup {
		return DriftPlacementGroup
	}
	return ""
}

// staticDrift compares the hash annotations, as the reference's
// areStaticFieldsDrifted: nothing is judged unless the class and the
// claim both carry a hash and a version, and the versions match.
func staticDrift(nc *v1.NodeClaim, class *awsv1.EC2NodeClass) cloudprovider.DriftReason {
	classHash, ok1 := class.Annotations[NodeClassHashAnnotationKey]
	classVersion, ok2 := class.Annotations[NodeClassHashVersionAnnotationKey]
	claimHash, ok3 := nc.Annotations[NodeClassHashAnnotationKey]
	claimVersion, ok4 := nc.Annotations[NodeClassHashVersionAnnotationKey]
	if !ok1 || !ok2 || !ok3 || !ok4 || classVersion != claimVersion || classHash == claimHash {
		return ""
	}
	return DriftNodeClass
}
