package ec2nodeclass

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	awsprovider "github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

// Stamps are the hash annotations the controller writes, as the
// reference's nodeclass.hash controller does
// (pkg/controllers/nodeclass/hash/controller.go at v1.14.1).
type Stamps struct {
	// Class is the class's annotations with its hash and hash version;
	// nil when they are already so.
	Class map[string]string
	// Claims are the NodeClaims of the class whose annotations change,
	// with their new annotations: only when the class carried another
	// hash version (or none), each claim of another version gets the
	// current version and, unless it is already Drifted, the class's
	// current hash. A hash of another version cannot tell drift, so the
	// claim starts over as launched from the class as it is: nodes
	// adopted from a Karpenter install of another hash version, or
	// launched by an older Capstan, are not replaced for it.
	Claims []v1.NodeClaim
}

// HashStamps decides the stamps for class, whose NodeClaims are among
// claims, and the cluster's CA bundle (which the hash covers).
func HashStamps(class *awsv1.EC2NodeClass, claims []v1.NodeClaim, caBundle string) Stamps {
	want := awsprovider.HashAnnotations(class, caBundle)
	var out Stamps
	if class.Annotations[awsprovider.NodeClassHashAnnotationKey] != want[awsprovider.NodeClassHashAnnotationKey] ||
		class.Annotations[awsprovider.NodeClassHashVersionAnnotationKey] != want[awsprovider.NodeClassHashVersionAnnotationKey] {
		out.Class = maps.Clone(class.Annotations)
		if out.Class == nil {
			out.Class = map[string]string{}
		}
		maps.Copy(out.Class, want)
	}
	if class.Annotations[awsprovider.NodeClassHashVersionAnnotationKey] == awsprovider.NodeClassHashVersion {
		return out
	}
	mine := NodeClaimsOf(claims, class.Name)
	for _, c := range claims {
		if !slices.Contains(mine, c.Name) || c.Annotations[awsprovider.NodeClassHashVersionAnnotationKey] == awsprovider.NodeClassHashVersion {
			continue
		}
		c = *c.DeepCopy()
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[awsprovider.NodeClassHashVersionAnnotationKey] = awsprovider.NodeClassHashVersion
		if meta.FindStatusCondition(c.Status.Conditions, v1.ConditionTypeDrifted) == nil {
			c.Annotations[awsprovider.NodeClassHashAnnotationKey] = want[awsprovider.NodeClassHashAnnotationKey]
		}
		out.Claims = append(out.Claims, c)
	}
	return out
}
