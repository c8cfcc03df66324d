package test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// InvalidNodePool is a NodePool the API server must reject with an error
// naming Field and containing Message. api/v1 asserts each against a real
// apiserver and pkg/manifests against its offline validation, so the two
// cannot drift apart.
type InvalidNodePool struct {
	Name     string
	NodePool *v1.NodePool
	Field    string
	Message  string
}

// InvalidNodePools lists a rejection for every OpenAPI constraint and CEL
// rule of the NodePool CRD.
func InvalidNodePools() []InvalidNodePool {
	cp := func(np *v1.NodePool) {
		np.Spec.Template.ObjectMeta.Labels = map[string]string{v1.ControlPlaneLabelKey: ""}
	}
	return []InvalidNodePool{
		{"In without values", NodePool(withRequirements(requirement(v1.LabelZone, corev1.NodeSelectorOpIn))),
			"spec.template.spec.requirements[0]", "requirements with operator 'In' must have a value defined"},
		{"minValues above values", NodePool(withRequirements(v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}, MinValues: ptr.To(3)})),
			"spec.template.spec.requirements[0]", "requirements with 'minValues' must have at least that many values"},
		{"Gt with two values", NodePool(withRequirements(requirement(v1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "1", "2"))),
			"spec.template.spec.requirements[0]", "must have a single positive integer value"},
		{"Lt with a negative value", NodePool(withRequirements(requirement(v1.LabelInstanceCPU, corev1.NodeSelectorOpLt, "-1"))),
			"spec.template.spec.requirements[0]", "must have a single positive integer value"},
		{"Gte with a word", NodePool(withRequirements(requirement(v1.LabelInstanceCPU, "Gte", "four"))),
			"spec.template.spec.requirements[0]", "must have a single positive integer value"},
		{"Gt without values", NodePool(withRequirements(requirement(v1.LabelInstanceCPU, corev1.NodeSelectorOpGt))),
			"spec.template.spec.requirements[0]", "must have a single positive integer value"},
		{"Gt overflowing int64", NodePool(withRequirements(requirement(v1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "9223372036854775808"))),
			"spec.template.spec.requirements[0]", "must have a single positive integer value"},
		{"Lt overflowing int64 with leading zeros", NodePool(withRequirements(requirement(v1.LabelInstanceCPU, corev1.NodeSelectorOpLt, "0099999999999999999999"))),
			"spec.template.spec.requirements[0]", "must have a single positive integer value"},
		{"minValues without values", NodePool(withRequirements(v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, MinValues: ptr.To(1)})),
			"spec.template.spec.requirements[0]", "requirements with 'minValues' must have at least that many values"},
		{"a value that is not a label value", NodePool(withRequirements(requirement("example.com/team", corev1.NodeSelectorOpIn, "ml team"))),
			"spec.template.spec.requirements[0].values[0]", "should match"},
		{"a key with an uppercase domain", NodePool(withRequirements(requirement("Example.com/team", corev1.NodeSelectorOpExists))),
			"spec.template.spec.requirements[0].key", "should match"},
		{"restricted karpenter.sh subdomain requirement", NodePool(withRequirements(requirement("team.karpenter.sh/x", corev1.NodeSelectorOpIn, "a"))),
			"spec.template.spec.requirements", `label domain "karpenter.sh" is restricted`},
		{"taint with an unknown effect", NodePool(func(np *v1.NodePool) {
			np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: "NoScheduleEver"}}
		}), "spec.template.spec.taints[0].effect", `Unsupported value: "NoScheduleEver"`},
		{"taint with an invalid key", NodePool(func(np *v1.NodePool) {
			np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated gpu", Effect: corev1.TaintEffectNoSchedule}}
		}), "spec.template.spec.taints[0].key", "should match"},
		{"startup taint with an invalid value", NodePool(func(np *v1.NodePool) {
			np.Spec.Template.Spec.StartupTaints = []corev1.Taint{{Key: "example.com/init", Value: "not ready", Effect: corev1.TaintEffectNoSchedule}}
		}), "spec.template.spec.startupTaints[0].value", "should match"},
		{"label value that is not a label value", NodePool(func(np *v1.NodePool) {
			np.Spec.Template.ObjectMeta.Labels = map[string]string{"team": "ml team"}
		}), "spec.template.metadata.labels.team", "should match"},
		{"Exists with values", NodePool(withRequirements(requirement(v1.LabelZone, corev1.NodeSelectorOpExists, "a"))),
			"spec.template.spec.requirements[0]", "operator 'Exists' or 'DoesNotExist' must not have values"},
		{"unknown operator", NodePool(withRequirements(requirement(v1.LabelZone, "Near", "a"))),
			"spec.template.spec.requirements[0].operator", "Unsupported value: \"Near\""},
		{"101 requirements", NodePool(func(np *v1.NodePool) {
			for i := range 101 {
				np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, requirement(fmt.Sprintf("example.com/k%d", i), corev1.NodeSelectorOpExists))
			}
		}), "spec.template.spec.requirements", "must have at most 100 items"},
		{"restricted karpenter.sh requirement", NodePool(withRequirements(requirement(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, "x"))),
			"spec.template.spec.requirements", `label "karpenter.sh/nodepool" is restricted`},
		{"restricted hostname requirement", NodePool(withRequirements(requirement(v1.LabelHostname, corev1.NodeSelectorOpIn, "node-1"))),
			"spec.template.spec.requirements", `label "kubernetes.io/hostname" is restricted`},
		{"restricted karpenter.sh label", NodePool(func(np *v1.NodePool) {
			np.Spec.Template.ObjectMeta.Labels = map[string]string{v1.NodePoolLabelKey: "other"}
		}), "spec.template.metadata.labels", `label "karpenter.sh/nodepool" is restricted`},
		{"restricted karpenter.sh domain label", NodePool(func(np *v1.NodePool) {
			np.Spec.Template.ObjectMeta.Labels = map[string]string{"karpenter.sh/team": "a"}
		}), "spec.template.metadata.labels", `label domain "karpenter.sh" is restricted`},
		{"restricted hostname label", NodePool(func(np *v1.NodePool) {
			np.Spec.Template.ObjectMeta.Labels = map[string]string{v1.LabelHostname: "x"}
		}), "spec.template.metadata.labels", `label "kubernetes.io/hostname" is restricted`},
		{"budget nodes above 100%", NodePool(func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "110%"}} }),
			"spec.disruption.budgets[0].nodes", "should match"},
		{"budget nodes not a number", NodePool(func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "ten"}} }),
			"spec.disruption.budgets[0].nodes", "should match"},
		{"budget schedule without duration", NodePool(func(np *v1.NodePool) {
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1", Schedule: ptr.To("@daily")}}
		}), "spec.disruption.budgets", "'schedule' must be set with 'duration'"},
		{"budget duration without schedule", NodePool(func(np *v1.NodePool) {
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1", Duration: &metav1.Duration{Duration: time.Hour}}}
		}), "spec.disruption.budgets", "'schedule' must be set with 'duration'"},
		{"budget duration in seconds", NodePool(func(np *v1.NodePool) {
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1", Schedule: ptr.To("@daily"), Duration: &metav1.Duration{Duration: 30 * time.Second}}}
		}), "spec.disruption.budgets[0].duration", "should match"},
		{"budget with an unknown reason", NodePool(func(np *v1.NodePool) {
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1", Reasons: []v1.DisruptionReason{"Expired"}}}
		}), "spec.disruption.budgets[0].reasons[0]", "Unsupported value: \"Expired\""},
		{"51 budgets", NodePool(func(np *v1.NodePool) {
			for range 51 {
				np.Spec.Disruption.Budgets = append(np.Spec.Disruption.Budgets, v1.Budget{Nodes: "1"})
			}
		}), "spec.disruption.budgets", "must have at most 50 items"},
		{"weight 0", NodePool(func(np *v1.NodePool) { np.Spec.Weight = ptr.To[int32](0) }),
			"spec.weight", "should be greater than or equal to 1"},
		{"weight 101", NodePool(func(np *v1.NodePool) { np.Spec.Weight = ptr.To[int32](101) }),
			"spec.weight", "should be less than or equal to 100"},
		{"unknown consolidation policy", NodePool(func(np *v1.NodePool) { np.Spec.Disruption.ConsolidationPolicy = "Always" }),
			"spec.disruption.consolidationPolicy", "Unsupported value: \"Always\""},
		{"control-plane label allowing spot", NodePool(cp),
			"spec.template", "a NodePool for control-plane nodes"},
		{"control-plane taint with spot in the capacity types", NodePool(func(np *v1.NodePool) {
			np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: v1.ControlPlaneLabelKey, Effect: corev1.TaintEffectNoSchedule}}
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{requirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot", "on-demand")}
		}), "spec.template", "a NodePool for control-plane nodes"},
		{"control-plane label with NotIn and no values", NodePool(func(np *v1.NodePool) {
			cp(np)
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{requirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpNotIn)}
		}), "spec.template", "a NodePool for control-plane nodes"},
		// Static NodePools: the reference's pkg/apis/v1/nodepool.go (v1.8).
		{"static with a cpu limit", NodePool(func(np *v1.NodePool) {
			np.Spec.Replicas = ptr.To[int64](2)
			np.Spec.Limits = v1.Limits{"nodes": resource.MustParse("4"), corev1.ResourceCPU: resource.MustParse("10")}
		}), "spec", "only 'limits.nodes' is supported on static NodePools"},
		{"static with a weight", NodePool(func(np *v1.NodePool) {
			np.Spec.Replicas = ptr.To[int64](2)
			np.Spec.Weight = ptr.To[int32](10)
		}), "spec", "'weight' is not supported on static NodePools"},
		{"negative replicas", NodePool(func(np *v1.NodePool) { np.Spec.Replicas = ptr.To[int64](-1) }),
			"spec.replicas", "should be greater than or equal to 0"},
		{"missing nodeClassRef", NodePool(func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef = nil }),
			"spec.template.spec.nodeClassRef", "Required value"},
		{"empty nodeClassRef kind", NodePool(func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Kind = "" }),
			"spec.template.spec.nodeClassRef.kind", "kind may not be empty"},
		{"empty nodeClassRef name", NodePool(func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = "" }),
			"spec.template.spec.nodeClassRef.name", "name may not be empty"},
		{"empty nodeClassRef group", NodePool(func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Group = "" }),
			"spec.template.spec.nodeClassRef.group", "group may not be empty"},
	}
}

func requirement(key string, op corev1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirementWithMinValues {
	return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

func withRequirements(reqs ...v1.NodeSelectorRequirementWithMinValues) func(*v1.NodePool) {
	return func(np *v1.NodePool) { np.Spec.Template.Spec.Requirements = reqs }
}
