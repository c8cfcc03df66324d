package scheduling

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

// Tolerates returns nil if the tolerations tolerate every NoSchedule and
// NoExecute taint (PreferNoSchedule never blocks), as kube-scheduler's
// TaintToleration filter decides; otherwise an error naming the first
// untolerated taint.
func Tolerates(tolerations []corev1.Toleration, taints []corev1.Taint) error {
	taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), taints, tolerations, blocksScheduling, true)
	if untolerated {
		return fmt.Errorf("taint %s=%s:%s not tolerated", taint.Key, taint.Value, taint.Effect)
	}
	return nil
}

func blocksScheduling(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// ToleratesStrictly is Tolerates with PreferNoSchedule taints blocking too:
// the solver first avoids them and tolerates them only as the last
// relaxation, as the reference does, so a pod goes to an untainted
// NodePool or node when one fits.
func ToleratesStrictly(tolerations []corev1.Toleration, taints []corev1.Taint) error {
	taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), taints, tolerations, func(*corev1.Taint) bool { return true }, true)
	if untolerated {
		return fmt.Errorf("taint %s=%s:%s not tolerated", taint.Key, taint.Value, taint.Effect)
	}
	return nil
}

// HasPreferNoSchedule reports whether any taint is PreferNoSchedule.
func HasPreferNoSchedule(taints []corev1.Taint) bool {
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			return true
		}
	}
	return false
}
