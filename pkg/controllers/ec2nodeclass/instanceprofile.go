package ec2nodeclass

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/smithy-go"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// TerminationFinalizer is the reference's finalizer on an EC2NodeClass:
// Capstan puts it on classes with spec.role, and removes it once the
// class's NodeClaims are gone and the instance profile it made for the
// role is deleted.
const TerminationFinalizer = awsv1.Group + "/termination"

// Tag keys on the instance profiles Capstan makes, as the reference tags
// them (its recommended IAM policy conditions on them).
const (
	TagEKSClusterName = "eks:eks-cluster-name"
	TagNodeClass      = "karpenter.k8s.aws/ec2nodeclass"
	TagRegion         = "topology.kubernetes.io/region"
)

// InstanceProfileName is the instance profile Capstan manages for the
// EC2NodeClass named nodeClass with spec.role: <cluster>_<n>, where n is
// the 64-bit FNV-1 hash of the region and the class's name, in decimal.
// It is the name the reference gave (until v1.7) to the profile of the
// same class — hashstructure's hash of that string is its FNV-1 — so a
// cluster moving from it adopts the profile it made. One name per class:
// a role change swaps the role in it.
func InstanceProfileName(clusterName, region, nodeClass string) string {
	h := fnv.New64()
	_, _ = h.Write([]byte(region + nodeClass))
	return fmt.Sprintf("%s_%d", clusterName, h.Sum64())
}

// InstanceProfilePath is the IAM path a new profile is created under,
// the reference's: /karpenter/<region>/<cluster>/<class uid>/.
func InstanceProfilePath(region, clusterName, uid string) string {
	return "/karpenter/" + region + "/" + clusterName + "/" + uid + "/"
}

// InstanceProfileTags are a new profile's tags: spec.tags, overridden
// by kubernetes.io/cluster/<cluster>=owned, eks:eks-cluster-name,
// karpenter.k8s.aws/ec2nodeclass and topology.kubernetes.io/region, as
// the reference's.
func InstanceProfileTags(nc *awsv1.EC2NodeClass, clusterName, region string) map[string]string {
	tags := maps.Clone(nc.Spec.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	tags["kubernetes.io/cluster/"+clusterName] = "owned"
	tags[TagEKSClusterName] = clusterName
	tags[TagNodeClass] = nc.Name
	tags[TagRegion] = region
	return tags
}

// IAMTags are tags as IAM takes them, by key.
func IAMTags(tags map[string]string) []iamtypes.Tag {
	out := make([]iamtypes.Tag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, iamtypes.Tag{Key: new(k), Value: new(tags[k])})
	}
	return out
}

// RoleName is the name spec.role gives: a role given with its path
// (team/KarpenterNodeRole) is named by its last segment, as
// AddRoleToInstanceProfile takes no path.
func RoleName(role string) string {
	return role[strings.LastIndexByte(role, '/')+1:]
}

// RoleChanges are the calls that make a profile holding roles hold only
// role (a name, see RoleName): the roles to remove from it, and whether
// to add role. A profile holds one role at most, so another role in it
// is removed before role is added.
func RoleChanges(roles []string, role string) (remove []string, add bool) {
	for _, r := range roles {
		if r != role {
			remove = append(remove, r)
		}
	}
	return remove, !slices.Contains(roles, role)
}

// NeedsFinalizer reports whether nc gets TerminationFinalizer: it names
// a role, for which Capstan makes an instance profile it must delete.
// The finalizer stays when the class moves to spec.instanceProfile, so
// the profile is still deleted with the class.
func NeedsFinalizer(nc *awsv1.EC2NodeClass) bool { return nc.Spec.Role != "" }

// NodeClaimsOf are the names of the NodeClaims among claims that
// reference the EC2NodeClass named name, sorted.
func NodeClaimsOf(claims []v1.NodeClaim, name string) []string {
	var out []string
	for _, c := range claims {
		ref := c.Spec.NodeClassRef
		if ref != nil && ref.Group == awsv1.Group && ref.Kind == "EC2NodeClass" && ref.Name == name {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return out
}

// WaitingMessage is the event that says a deleted class waits for its
// NodeClaims, naming a few of them.
func WaitingMessage(claims []string) string {
	const shown = 5
	names := strings.Join(claims[:min(len(claims), shown)], ", ")
	if len(claims) > shown {
		names += fmt.Sprintf(" and %d more", len(claims)-shown)
	}
	return fmt.Sprintf("waiting on %d NodeClaim(s) to terminate before deleting the instance profile: %s", len(claims), names)
}

// IsRoleNotFound reports whether err is IAM's answer to adding a role
// that does not exist: NoSuchEntity about a role (the same code answers
// for a missing profile).
func IsRoleNotFound(err error) bool {
	apiErr, ok := errors.AsType[smithy.APIError](err)
	return ok && apiErr.ErrorCode() == "NoSuchEntity" && strings.Contains(apiErr.ErrorMessage(), "role")
}

// isNoSuchEntity reports whether err is IAM's NoSuchEntity.
func isNoSuchEntity(err error) bool {
	apiErr, ok := errors.AsType[smithy.APIError](err)
	return ok && apiErr.ErrorCode() == "NoSuchEntity"
}

// resolveInstanceProfile is the instance profile and its condition:
// spec.instanceProfile as it is; for spec.role, the profile the
// controller made with the role in it (found.InstanceProfile), else why
// not. A role that does not exist is ReasonRoleNotFound; any other
// failure ReasonInstanceProfileCreationFailed, unless the profile was
// ready for the current generation, which an IAM hiccup does not undo.
func resolveInstanceProfile(nc *awsv1.EC2NodeClass, found Found) (string, metav1.Condition) {
	spec := nc.Spec
	switch {
	case spec.InstanceProfile != nil && *spec.InstanceProfile != "":
		return *spec.InstanceProfile, trueCondition(awsv1.ConditionTypeInstanceProfileReady, "")
	case spec.Role == "":
		return "", falseCondition(awsv1.ConditionTypeInstanceProfileReady, ReasonInstanceProfileNotSet, "set spec.role or spec.instanceProfile")
	case found.InstanceProfileErr == nil && found.InstanceProfile != "":
		return found.InstanceProfile, trueCondition(awsv1.ConditionTypeInstanceProfileReady, "")
	case IsRoleNotFound(found.InstanceProfileErr):
		return "", falseCondition(awsv1.ConditionTypeInstanceProfileReady, ReasonRoleNotFound, fmt.Sprintf(
			"role %q in spec.role does not exist in the account; create it or fix spec.role: %v", spec.Role, found.InstanceProfileErr))
	}
	if prev := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeInstanceProfileReady); prev != nil &&
		prev.ObservedGeneration == nc.Generation && prev.Status == metav1.ConditionTrue && nc.Status.InstanceProfile != "" {
		return nc.Status.InstanceProfile, *prev
	}
	err := found.InstanceProfileErr
	if err == nil {
		err = errors.New("no instance profile")
	}
	return "", falseCondition(awsv1.ConditionTypeInstanceProfileReady, ReasonInstanceProfileCreationFailed, fmt.Sprintf(
		"making the instance profile for spec.role %q failed, retrying (check the controller's IAM permissions): %v", spec.Role, err))
}
