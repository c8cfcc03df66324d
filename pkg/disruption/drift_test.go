package disruption

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestDrifted(t *testing.T) {
	in := func(key string, values ...string) v1.NodeSelectorRequirementWithMinValues {
		return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
	}
	// The NodeClaim was created from this NodePool, as the provisioner
	// stamps it, and launched as an m5.large on-demand node.
	created := func() (*v1.NodePool, *v1.NodeClaim) {
		np := test.NodePool(func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{in(v1.LabelInstanceType, "m5.large", "m5.xlarge"), in("team", "ml")}
		})
		nc := test.NodeClaim(func(nc *v1.NodeClaim) {
			nc.Annotations = map[string]string{v1.NodePoolHashAnnotationKey: np.Hash(), v1.NodePoolHashVersionAnnotationKey: v1.NodePoolHashVersion}
			nc.Labels = map[string]string{v1.NodePoolLabelKey: np.Name, v1.LabelInstanceType: "m5.large", v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand, "team": "ml"}
		})
		return np, nc
	}
	cases := []struct {
		name string
		edit func(np *v1.NodePool, nc *v1.NodeClaim)
		want string
	}{
		{"unchanged", func(*v1.NodePool, *v1.NodeClaim) {}, ""},
		{"a template taint added", func(np *v1.NodePool, _ *v1.NodeClaim) {
			np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
		}, DriftNodePool},
		{"a template label changed", func(np *v1.NodePool, _ *v1.NodeClaim) {
			np.Spec.Template.ObjectMeta.Labels = map[string]string{"tier": "gold"}
		}, DriftNodePool},
		{"weight, limits and budgets are behavioural", func(np *v1.NodePool, _ *v1.NodeClaim) {
			np.Spec.Weight = ptr.To[int32](50)
			np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("10")}
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}}
			np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("1h")
		}, ""},
		{"widening the instance types (seed 004's m5.large) is not drift", func(np *v1.NodePool, _ *v1.NodeClaim) {
			np.Spec.Template.Spec.Requirements[0] = in(v1.LabelInstanceType, "m5.large", "m5.xlarge", "m5.2xlarge")
		}, ""},
		{"narrowing them past the node's type is", func(np *v1.NodePool, _ *v1.NodeClaim) {
			np.Spec.Template.Spec.Requirements[0] = in(v1.LabelInstanceType, "m5.xlarge")
		}, DriftRequirements},
		{"a custom label's value changed", func(np *v1.NodePool, _ *v1.NodeClaim) {
			np.Spec.Template.Spec.Requirements[1] = in("team", "web")
		}, DriftRequirements},
		{"a requirement on a custom label the node lacks", func(np *v1.NodePool, _ *v1.NodeClaim) {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, in("example.com/tier", "a"))
		}, DriftRequirements},
		{"a well-known label the NodeClaim does not carry is the cloud's", func(np *v1.NodePool, _ *v1.NodeClaim) {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, in(v1.LabelZone, "zone-a"))
		}, ""},
		{"another hash version is re-stamped, not drift", func(np *v1.NodePool, nc *v1.NodeClaim) {
			nc.Annotations[v1.NodePoolHashVersionAnnotationKey] = "v0"
			np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np, nc := created()
			tc.edit(np, nc)
			if got := Drifted(nc, np); got != tc.want {
				t.Errorf("Drifted = %q, want %q", got, tc.want)
			}
		})
	}
}
