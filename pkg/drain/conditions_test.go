package drain

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// The conditions a termination sets on its NodeClaim, as the reference's
// termination tests expect them (pkg/controllers/node/termination/
// suite_test.go, v1.14.1): Drained Unknown/Draining while pods leave,
// then True; VolumesDetached Unknown/AwaitingVolumeDetachment while an
// attachment remains, True once none does, False/
// TerminationGracePeriodElapsed when the grace period ends first, and
// the instance then goes.
func TestDrainConditions(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message}
	}
	draining := cond(v1.ConditionTypeDrained, metav1.ConditionUnknown, "Draining", "Draining")
	drained := cond(v1.ConditionTypeDrained, metav1.ConditionTrue, "Drained", "")
	awaiting := cond(v1.ConditionTypeVolumesDetached, metav1.ConditionUnknown, "AwaitingVolumeDetachment", "AwaitingVolumeDetachment")
	detached := cond(v1.ConditionTypeVolumesDetached, metav1.ConditionTrue, "VolumesDetached", "")
	elapsed := cond(v1.ConditionTypeVolumesDetached, metav1.ConditionFalse, "TerminationGracePeriodElapsed", "TerminationGracePeriodElapsed")
	withConditions := func(cs ...metav1.Condition) func(*v1.NodeClaim) {
		return func(nc *v1.NodeClaim) { nc.Status.Conditions = cs }
	}
	hourGrace := func(nc *v1.NodeClaim) { nc.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour} }
	web := []*corev1.Pod{pod("web", inNamespace("ns"))}
	for _, tc := range []struct {
		name        string
		in          Termination
		want        []metav1.Condition
		wantDrained bool
	}{
		{"pods to evict: draining", Termination{NodeClaim: deletedClaim(), Node: drainingNode(nodeDeleting), Pods: web, Now: start},
			[]metav1.Condition{draining}, false},
		{"still draining: nothing to set", Termination{NodeClaim: deletedClaim(withConditions(draining)), Node: drainingNode(nodeDeleting), Pods: web, Now: start},
			nil, false},
		{"drained, no volume", Termination{NodeClaim: deletedClaim(withConditions(draining)), Node: drainingNode(nodeDeleting), Now: start},
			[]metav1.Condition{drained, detached}, true},
		{"drained, a volume attached: awaiting detachment", Termination{NodeClaim: deletedClaim(withConditions(draining)), Node: drainingNode(nodeDeleting), Attachments: []string{"va-1"}, Now: start},
			[]metav1.Condition{drained, awaiting}, false},
		{"the volume detached", Termination{NodeClaim: deletedClaim(withConditions(drained, awaiting)), Node: drainingNode(nodeDeleting), Now: start},
			[]metav1.Condition{detached}, true},
		{"a volume attached within the grace period: wait", Termination{NodeClaim: deletedClaim(hourGrace, withConditions(drained, awaiting)), Node: drainingNode(nodeDeleting),
			Attachments: []string{"va-1"}, Now: start.Add(59 * time.Minute)},
			nil, false},
		{"a volume attached past the grace period: the instance goes", Termination{NodeClaim: deletedClaim(hourGrace, withConditions(drained, awaiting)), Node: drainingNode(nodeDeleting),
			Attachments: []string{"va-1"}, Now: start.Add(time.Hour)},
			[]metav1.Condition{elapsed}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step := Drain(tc.in)
			var got []metav1.Condition
			for _, e := range step.Effects {
				if c, ok := e.(effects.SetCondition); ok {
					if c.Object != effects.NodeClaimRef("nc") || !c.Condition.LastTransitionTime.Time.Equal(tc.in.Now) {
						t.Errorf("condition %s on %v at %v, want on the NodeClaim at %v", c.Condition.Type, c.Object, c.Condition.LastTransitionTime, tc.in.Now)
					}
					c.Condition.LastTransitionTime = metav1.Time{}
					got = append(got, c.Condition)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if step.Drained != tc.wantDrained {
				t.Errorf("Drained %v, want %v", step.Drained, tc.wantDrained)
			}
		})
	}
}
