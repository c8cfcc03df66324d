package state

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// The expectations follow the reference's designs/do-not-disrupt-grace-period.md
// ("expiration_time = pod.Status.StartTime + parsed_duration") and
// pkg/utils/pod/scheduling.go (no start time: protected), except that an
// invalid value holds the pod (docs/disruption.md).
func TestDoNotDisruptOf(t *testing.T) {
	start := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	pod := func(value string, started bool) *corev1.Pod {
		p := &corev1.Pod{}
		if value != "" {
			p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: value}
		}
		if started {
			p.Status.StartTime = &metav1.Time{Time: start}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		now  time.Time
		want DoNotDisrupt
	}{
		{"no annotation", pod("", true), start, DoNotDisrupt{}},
		{"true", pod("true", true), start.Add(1000 * time.Hour), DoNotDisrupt{Active: true}},
		{"false asks for nothing", pod("false", true), start, DoNotDisrupt{}},
		{"within the duration", pod("4h", true), start.Add(3*time.Hour + 59*time.Minute),
			DoNotDisrupt{Active: true, Until: start.Add(4 * time.Hour)}},
		{"the duration elapsed", pod("4h", true), start.Add(4 * time.Hour), DoNotDisrupt{Until: start.Add(4 * time.Hour)}},
		{"compound duration", pod("1h30m", true), start.Add(time.Hour), DoNotDisrupt{Active: true, Until: start.Add(90 * time.Minute)}},
		{"not started yet", pod("30m", false), start.Add(time.Hour), DoNotDisrupt{Active: true}},
		{"invalid", pod("yes", true), start, DoNotDisrupt{Active: true, Invalid: `"yes" is neither "true" nor a duration`}},
		{"zero", pod("0s", true), start, DoNotDisrupt{Active: true, Invalid: `duration "0s" must be positive`}},
		{"negative", pod("-5m", true), start, DoNotDisrupt{Active: true, Invalid: `duration "-5m" must be positive`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DoNotDisruptOf(tc.pod, tc.now)); diff != "" {
				t.Error(diff)
			}
		})
	}
}
