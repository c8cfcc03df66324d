package provisioning_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/test"
)

func term(key string, values ...string) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}}}
}

func requiredTerms(terms ...corev1.NodeSelectorTerm) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
}

func gpuTypes() []*cloudprovider.InstanceType {
	gpu := func(name, gpuName string, price float64) *cloudprovider.InstanceType {
		return test.InstanceType(test.InstanceTypeOptions{Name: name, CPU: 8, Memory: 32, Price: price,
			Labels:   map[string]string{v1.LabelInstanceGPUName: gpuName},
			Extended: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}})
	}
	return []*cloudprovider.InstanceType{gpu("g4dn.2xlarge", "t4", 0.75), gpu("g5.2xlarge", "a10g", 1.21), gpu("g6.2xlarge", "l4", 0.98)}
}

// Required terms are tried in listed order: a pricier first term wins
// over a cheaper second one.
func TestOrderedRequiredTerms(t *testing.T) {
	r := provisioning.Solve(provisioning.Input{
		Pods:          pods(1, "1", "1Gi", requiredTerms(term(v1.LabelInstanceGPUName, "a10g"), term(v1.LabelInstanceGPUName, "t4"))),
		NodePools:     []*v1.NodePool{nodePool("default")},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": gpuTypes()},
	})
	if len(r.NewNodeClaims) != 1 || r.NewNodeClaims[0].InstanceTypes[0].Name != "g5.2xlarge" {
		t.Fatalf("claims %+v, want one g5.2xlarge (a10g, the first term)", r.NewNodeClaims)
	}
	if got := len(r.NewNodeClaims[0].InstanceTypes); got != 1 {
		t.Errorf("the a10g claim keeps %d options; the t4 term must not leak in", got)
	}

	// With the first term impossible, the second is used.
	r = provisioning.Solve(provisioning.Input{
		Pods:          pods(1, "1", "1Gi", requiredTerms(term(v1.LabelInstanceGPUName, "h100"), term(v1.LabelInstanceGPUName, "t4"))),
		NodePools:     []*v1.NodePool{nodePool("default")},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": gpuTypes()},
	})
	if len(r.NewNodeClaims) != 1 || r.NewNodeClaims[0].InstanceTypes[0].Name != "g4dn.2xlarge" {
		t.Fatalf("claims %+v, want one g4dn.2xlarge", r.NewNodeClaims)
	}
}

// Preferred node affinity is honoured when it can be and relaxed when not.
func TestPreferredNodeAffinity(t *testing.T) {
	prefer := func(weight int32, key string, values ...string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			if p.Spec.Affinity == nil {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
			}
			p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(
				p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.PreferredSchedulingTerm{Weight: weight, Preference: term(key, values...)})
		}
	}
	r := provisioning.Solve(provisioning.Input{
		Pods:          pods(1, "1", "1Gi", prefer(10, v1.LabelInstanceGPUName, "l4"), prefer(1, v1.LabelZone, "zone-b")),
		NodePools:     []*v1.NodePool{nodePool("default")},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": gpuTypes()},
	})
	c := r.NewNodeClaims[0]
	if c.InstanceTypes[0].Name != "g6.2xlarge" || !c.Requirements[v1.LabelZone].Has("zone-b") || c.Requirements[v1.LabelZone].Has("zone-a") {
		t.Errorf("preferences not honoured: %s with %s", c.InstanceTypes[0].Name, c.Requirements)
	}

	r = provisioning.Solve(provisioning.Input{
		Pods:          pods(1, "1", "1Gi", prefer(10, v1.LabelInstanceGPUName, "h100"), prefer(1, v1.LabelZone, "zone-b")),
		NodePools:     []*v1.NodePool{nodePool("default")},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": gpuTypes()},
	})
	c = r.NewNodeClaims[0]
	if c.InstanceTypes[0].Name != "g4dn.2xlarge" || !c.Requirements[v1.LabelZone].Has("zone-b") {
		t.Errorf("want the unsatisfiable h100 preference relaxed and the zone kept: %s with %s", c.InstanceTypes[0].Name, c.Requirements)
	}
}
