package simulator

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestStartupTaintsAreRemovedAtRegistration(t *testing.T) {
	startup := []corev1.Taint{{Key: "cni-not-ready", Effect: corev1.TaintEffectNoSchedule}}
	taints := append([]corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}, startup...)
	got := withoutStartupTaints(taints, startup)
	if len(got) != 1 || got[0].Key != "gpu" {
		t.Errorf("taints %v, want the NodePool's gpu taint only", got)
	}
}

func TestPodScheduledCondition(t *testing.T) {
	p := &corev1.Pod{}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if !setScheduled(p, corev1.ConditionFalse, corev1.PodReasonUnschedulable, now) {
		t.Error("first Unschedulable is not a change")
	}
	if setScheduled(p, corev1.ConditionFalse, corev1.PodReasonUnschedulable, now.Add(time.Second)) {
		t.Error("the same condition again is a change; the provisioner would be triggered for nothing")
	}
	if !setScheduled(p, corev1.ConditionTrue, "", now) || len(p.Status.Conditions) != 1 {
		t.Errorf("conditions %v", p.Status.Conditions)
	}
}
