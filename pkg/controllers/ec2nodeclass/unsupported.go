package ec2nodeclass

import (
	"fmt"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// Unsupported names, as paths in the manifest, the fields spec sets that
// the API accepts (for compatibility with the reference's manifests) but
// Capstan's AWS provider does not honour yet. The status controller
// reports them in ValidationSucceeded; the provider may call it too.
// This is the one list: when the provider learns a field, remove it
// here.
func Unsupported(spec awsv1.EC2NodeClassSpec) []string {
	var out []string
	if spec.UserData != nil && (&awsv1.EC2NodeClass{Spec: spec}).AMIFamily() == awsv1.AMIFamilyBottlerocket {
		// The provider cannot merge the user's TOML settings with the
		// ones a node needs to join yet, and refuses to launch.
		out = append(out, "spec.userData with the Bottlerocket family")
	}
	if spec.InstanceStorePolicy != nil {
		out = append(out, "spec.instanceStorePolicy")
	}
	for i, t := range spec.AMISelectorTerms {
		// Capstan has no SSM client.
		if t.SSMParameter != "" {
			out = append(out, fmt.Sprintf("spec.amiSelectorTerms[%d].ssmParameter", i))
		}
	}
	return out
}
