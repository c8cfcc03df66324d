package v1

import corev1 "k8s.io/api/core/v1"

// DisruptedNoScheduleTaint keeps new pods off a node that is being
// disrupted or terminated.
func DisruptedNoScheduleTaint() corev1.Taint {
	return corev1.Taint{Key: DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}
}

// UnregisteredNoExecuteTaint is set on a node until its NodeClaim has
// registered it, so no pod runs before labels and taints are synced.
func UnregisteredNoExecuteTaint() corev1.Taint {
	return corev1.Taint{Key: UnregisteredTaintKey, Effect: corev1.TaintEffectNoExecute}
}
