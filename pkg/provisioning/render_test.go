package provisioning

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestNewNodeClaim(t *testing.T) {
	np := test.NodePool(func(np *v1.NodePool) {
		np.Name, np.UID = "default", "uid-1"
		np.Spec.Template.ObjectMeta.Labels = map[string]string{"team": "ml"}
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		np.Spec.Template.Spec.ExpireAfter = v1.MustParseNillableDuration("24h")
	})
	plan := &NodeClaim{
		NodePool: "default",
		Requirements: scheduling.NewRequirements(
			scheduling.NewRequirement(v1.LabelInstanceType, corev1.NodeSelectorOpIn, "g5.xlarge", "g6.xlarge"),
			scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot),
		),
		InstanceTypes: []*cloudprovider.InstanceType{{Name: "g6.xlarge"}, {Name: "g5.xlarge"}},
		Requests:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")},
		Labels:        map[string]string{v1.NodePoolLabelKey: "default", "team": "ml"},
	}
	nc := NewNodeClaim(np, plan, "default-abcde")
	if diff := cmp.Diff(map[string]string{v1.NodePoolLabelKey: "default", "team": "ml"}, nc.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if nc.Annotations[v1.NodePoolHashAnnotationKey] != np.Hash() || nc.Annotations[PreferredAnnotationKey] != "g6.xlarge/spot" {
		t.Errorf("annotations %v", nc.Annotations)
	}
	if diff := cmp.Diff([]metav1.OwnerReference{{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: "default", UID: "uid-1", BlockOwnerDeletion: ptrTrue()}}, nc.OwnerReferences); diff != "" {
		t.Errorf("owner (-want +got):\n%s", diff)
	}
	if len(nc.Spec.Requirements) != 2 || nc.Spec.Taints[0].Key != "gpu" || nc.Spec.ExpireAfter.String() != "24h0m0s" || nc.Spec.Resources.Requests.Cpu().String() != "3" {
		t.Errorf("spec %+v", nc.Spec)
	}
}

func ptrTrue() *bool { b := true; return &b }
