package test

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// ValidNodePool is a NodePool the API server must accept: manifests
// written as the reference's documentation writes them. api/v1 asserts
// each against a real apiserver and pkg/manifests offline, so no rule can
// reject them by reading a field that is not there.
type ValidNodePool struct {
	Name     string
	NodePool *v1.NodePool
}

// ValidNodePools lists the accepted shapes the rules must stay total over.
func ValidNodePools() []ValidNodePool {
	return []ValidNodePool{
		// The reference's designs/static-capacity.md example: replicas with
		// limits.nodes and budgets (consolidation fields are ignored).
		{"static with limits.nodes", NodePool(func(np *v1.NodePool) {
			np.Spec.Replicas = ptr.To[int64](12)
			np.Spec.Limits = v1.Limits{"nodes": resource.MustParse("20")}
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "10%"}}
		})},
		{"static with zero replicas", NodePool(func(np *v1.NodePool) { np.Spec.Replicas = ptr.To[int64](0) })},
		{"Exists without values", NodePool(withRequirements(requirement("example.com/team", corev1.NodeSelectorOpExists)))},
		{"DoesNotExist without values", NodePool(withRequirements(requirement("example.com/team", corev1.NodeSelectorOpDoesNotExist)))},
		{"Exists with an empty values list", NodePool(withRequirements(v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpExists, Values: []string{}}))},
		{"NotIn", NodePool(withRequirements(requirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpNotIn, v1.CapacityTypeSpot)))},
		{"In with minValues", NodePool(withRequirements(v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5", "c5"}, MinValues: ptr.To(2)}))},
		{"Gt and Lt", NodePool(withRequirements(requirement(v1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "0"), requirement(v1.LabelInstanceMemory, corev1.NodeSelectorOpLt, "9223372036854775807")))},
		{"Gte and Lte", NodePool(withRequirements(requirement(v1.LabelInstanceCPU, "Gte", "2"), requirement(v1.LabelInstanceGeneration, "Lte", "0007")))},
		{"well-known kubernetes.io keys", NodePool(withRequirements(
			requirement(v1.LabelArch, corev1.NodeSelectorOpIn, "amd64", "arm64"),
			requirement(v1.LabelOS, corev1.NodeSelectorOpIn, "linux"),
			requirement(v1.LabelZone, corev1.NodeSelectorOpIn, "us-east-1a"),
			requirement(v1.LabelRegion, corev1.NodeSelectorOpIn, "us-east-1"),
			requirement(v1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
			requirement("node.kubernetes.io/windows-build", corev1.NodeSelectorOpDoesNotExist),
			requirement("example.node-restriction.kubernetes.io/pool", corev1.NodeSelectorOpIn, "a"),
		))},
		{"kops.k8s.io and AWS keys", NodePool(withRequirements(
			requirement("kops.k8s.io/instancegroup", corev1.NodeSelectorOpIn, "nodes"),
			requirement(v1.LabelZoneID, corev1.NodeSelectorOpIn, "use1-az1"),
			requirement(v1.LabelInstanceCategory, corev1.NodeSelectorOpNotIn, "t"),
		))},
		{"capacity type label and requirement", NodePool(func(np *v1.NodePool) {
			np.Spec.Template.ObjectMeta.Labels = map[string]string{v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand, v1.DoNotSyncTaintsLabelKey: "true", "team": ""}
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{requirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeOnDemand)}
		})},
		{"taints of every effect", NodePool(func(np *v1.NodePool) {
			np.Spec.Template.Spec.Taints = []corev1.Taint{
				{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
				{Key: "example.com/spare", Effect: corev1.TaintEffectPreferNoSchedule},
				{Key: "example.com/evict", Value: "v1.2_x-y", Effect: corev1.TaintEffectNoExecute},
			}
			np.Spec.Template.Spec.StartupTaints = []corev1.Taint{{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}}
		})},
		{"consolidationPolicy Balanced (v1.14)", NodePool(func(np *v1.NodePool) {
			np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyBalanced
		})},
	}
}
