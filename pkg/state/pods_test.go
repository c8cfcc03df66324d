package state

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestIsProvisionable(t *testing.T) {
	unschedulable := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}
	pending := func(mods ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{unschedulable}}}
		for _, m := range mods {
			m(p)
		}
		return p
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"unschedulable, default scheduler", pending(), true},
		{"bound", pending(func(p *corev1.Pod) { p.Spec.NodeName = "n" }), false},
		{"terminating", pending(func(p *corev1.Pod) { p.DeletionTimestamp = &now }), false},
		{"succeeded", pending(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), false},
		{"not yet tried by the scheduler", &corev1.Pod{}, false},
		{"scheduling gated", pending(func(p *corev1.Pod) { p.Status.Conditions[0].Reason = corev1.PodReasonSchedulingGated }), false},
		{"another scheduler", pending(func(p *corev1.Pod) { p.Spec.SchedulerName = "llmaz-scheduler" }), false},
		{"a configured second scheduler", pending(func(p *corev1.Pod) { p.Spec.SchedulerName = "second-scheduler" }), true},
	} {
		if got := IsProvisionable(tc.pod, []string{corev1.DefaultSchedulerName, "second-scheduler"}); got != tc.want && tc.name != "another scheduler" {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		if tc.name == "another scheduler" && IsProvisionable(tc.pod, []string{corev1.DefaultSchedulerName}) {
			t.Errorf("%s: provisioned for a scheduler not configured", tc.name)
		}
	}
}

func TestIsDaemonSetPod(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Controller: ptr.To(true)}}}}
	if !IsDaemonSetPod(p) || IsDaemonSetPod(&corev1.Pod{}) {
		t.Errorf("daemonset detection wrong")
	}
}

func TestSchedulerNotServed(t *testing.T) {
	want := `its scheduler "volcano" is not one Capstan serves (default-scheduler, a); see --scheduler-names`
	if got := SchedulerNotServed("volcano", []string{"default-scheduler", "a"}); got != want {
		t.Errorf("SchedulerNotServed = %q, want %q", got, want)
	}
}
