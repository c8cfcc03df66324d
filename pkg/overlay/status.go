package overlay

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/api/v1alpha1"
)

// Conditions are the overlay's conditions after its verdict, from the
// ones it has (whose transition times are kept where the status does not
// change): ValidationSucceeded, and Ready following it, as the
// reference's (Ready over ValidationSucceeded; reasons RuntimeValidation
// and Conflict).
func Conditions(o *v1alpha1.NodeOverlay, v Verdict, now time.Time) []metav1.Condition {
	out := make([]metav1.Condition, len(o.Status.Conditions))
	copy(out, o.Status.Conditions)
	at := metav1.NewTime(now)
	valid := metav1.Condition{Type: v1alpha1.ConditionTypeValidationSucceeded, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ConditionTypeValidationSucceeded, ObservedGeneration: o.Generation, LastTransitionTime: at}
	ready := metav1.Condition{Type: v1alpha1.ConditionTypeReady, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ConditionTypeReady, ObservedGeneration: o.Generation, LastTransitionTime: at}
	if v.Code != Valid {
		valid.Status, valid.Reason, valid.Message = metav1.ConditionFalse, string(v.Code), v.Message
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, string(v.Code), v.Message
	}
	meta.SetStatusCondition(&out, valid)
	meta.SetStatusCondition(&out, ready)
	return out
}
