package effects

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// DisruptedTaint puts the karpenter.sh/disrupted:NoSchedule taint on a
// node (on) or takes it off: a node being disrupted or drained takes no
// new pods. Every step that taints or un-taints a node builds the change
// here, so the taint is set and removed in one place.
func DisruptedTaint(node string, on bool) PatchNode {
	taints := []corev1.Taint{v1.DisruptedNoScheduleTaint()}
	if on {
		return PatchNode{Name: node, AddTaints: taints}
	}
	return PatchNode{Name: node, RemoveTaints: taints}
}
