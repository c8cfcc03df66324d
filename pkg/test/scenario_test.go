package test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// TestScenarioNodePoolTaint: the scenario's pods tolerate its NodePool's
// taint; another scenario's do not.
func TestScenarioNodePoolTaint(t *testing.T) {
	np := ScenarioNodePool("a", SimNodeClass(), v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.xlarge"}})
	if len(np.Spec.Template.Spec.Requirements) != 1 {
		t.Errorf("requirements %v", np.Spec.Template.Spec.Requirements)
	}
	taints := np.Spec.Template.Spec.Taints
	for ns, want := range map[string]bool{"a": true, "b": false} {
		_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), taints, []corev1.Toleration{ScenarioToleration(ns)}, nil, false)
		if got := !untolerated; got != want {
			t.Errorf("scenario %s's pods tolerate scenario a's nodes: %v, want %v", ns, got, want)
		}
	}
}
