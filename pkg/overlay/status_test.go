package overlay_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/overlay"
)

// The reference's conditions (pkg/controllers/nodeoverlay/controller.go):
// ValidationSucceeded False with reason Conflict or RuntimeValidation,
// Ready following it; an unchanged status keeps its transition time.
func TestConditions(t *testing.T) {
	then, now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)
	cond := func(typ string, status metav1.ConditionStatus, reason, message string, at time.Time) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(at)}
	}
	for _, tc := range []struct {
		name string
		had  []metav1.Condition
		v    overlay.Verdict
		want []metav1.Condition
	}{
		{name: "valid", v: overlay.Verdict{Code: overlay.Valid}, want: []metav1.Condition{
			cond("ValidationSucceeded", metav1.ConditionTrue, "ValidationSucceeded", "", now),
			cond("Ready", metav1.ConditionTrue, "Ready", "", now)}},
		{name: "conflict", v: overlay.Verdict{Code: overlay.Conflicting, Message: "conflict with NodeOverlay b"}, want: []metav1.Condition{
			cond("ValidationSucceeded", metav1.ConditionFalse, "Conflict", "conflict with NodeOverlay b", now),
			cond("Ready", metav1.ConditionFalse, "Conflict", "conflict with NodeOverlay b", now)}},
		{name: "still valid keeps the transition time",
			had: []metav1.Condition{cond("ValidationSucceeded", metav1.ConditionTrue, "ValidationSucceeded", "", then), cond("Ready", metav1.ConditionTrue, "Ready", "", then)},
			v:   overlay.Verdict{Code: overlay.Valid}, want: []metav1.Condition{
				cond("ValidationSucceeded", metav1.ConditionTrue, "ValidationSucceeded", "", then),
				cond("Ready", metav1.ConditionTrue, "Ready", "", then)}},
		{name: "invalid", v: overlay.Verdict{Code: overlay.Invalid, Message: "bad key"}, want: []metav1.Condition{
			cond("ValidationSucceeded", metav1.ConditionFalse, "RuntimeValidation", "bad key", now),
			cond("Ready", metav1.ConditionFalse, "RuntimeValidation", "bad key", now)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &v1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 2}, Status: v1alpha1.NodeOverlayStatus{Conditions: tc.had}}
			if diff := cmp.Diff(tc.want, overlay.Conditions(o, tc.v, now)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}
