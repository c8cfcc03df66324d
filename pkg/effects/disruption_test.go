package effects_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// The taint goes on once, however often it is asked for, and comes off
// leaving the node's other taints.
func TestDisruptedTaint(t *testing.T) {
	other := corev1.Taint{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoSchedule}
	node := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{other}}}
	effects.PatchNodeInto(node, effects.DisruptedTaint("a", true))
	effects.PatchNodeInto(node, effects.DisruptedTaint("a", true))
	if diff := cmp.Diff([]corev1.Taint{other, v1.DisruptedNoScheduleTaint()}, node.Spec.Taints); diff != "" {
		t.Errorf("tainted (-want +got):\n%s", diff)
	}
	effects.PatchNodeInto(node, effects.DisruptedTaint("a", false))
	if diff := cmp.Diff([]corev1.Taint{other}, node.Spec.Taints); diff != "" {
		t.Errorf("un-tainted (-want +got):\n%s", diff)
	}
	if got := effects.DisruptedTaint("a", true).Name; got != "a" {
		t.Errorf("patches node %q, want a", got)
	}
}
