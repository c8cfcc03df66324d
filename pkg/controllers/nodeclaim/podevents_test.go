package nodeclaim

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNeedsPodEventUpdate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		last metav1.Time
		now  time.Time
		want bool
	}{
		{metav1.Time{}, t0, true},
		{metav1.NewTime(t0), t0.Add(5 * time.Second), false},
		{metav1.NewTime(t0), t0.Add(PodEventDedupe), true},
	} {
		if got := NeedsPodEventUpdate(tc.last, tc.now); got != tc.want {
			t.Errorf("NeedsPodEventUpdate(%v, %v) = %v, want %v", tc.last, tc.now, got, tc.want)
		}
	}
}
