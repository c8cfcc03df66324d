package state_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/pkg/state"
)

func TestNewVirtualPodIsDeterministicAndMarked(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, GenerateName: "web-"},
		Spec:       corev1.PodSpec{NodeName: "somewhere", Containers: []corev1.Container{{Name: "c"}}},
	}
	a := state.NewVirtualPod(state.KindCapacityBuffer, "team", "warm", 2, tmpl)
	b := state.NewVirtualPod(state.KindCapacityBuffer, "team", "warm", 2, tmpl)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two builds differ (-first +second):\n%s", diff)
	}
	got := struct {
		Name, Namespace, GenerateName, NodeName, For string
		UID                                          string
		Labels                                       map[string]string
		Provisionable                                bool
	}{a.Name, a.Namespace, a.GenerateName, a.Spec.NodeName, a.Annotations[state.VirtualPodAnnotationKey], string(a.UID), a.Labels,
		state.IsProvisionable(&a, []string{corev1.DefaultSchedulerName})}
	want := got
	want.Name, want.Namespace, want.GenerateName, want.NodeName, want.For = "warm-virtual-2", "team", "", "", "CapacityBuffer/team/warm"
	want.UID, want.Labels, want.Provisionable = "virtual/CapacityBuffer/team/warm/2", map[string]string{"app": "web"}, true
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("virtual pod (-want +got):\n%s", diff)
	}
	if tmpl.Spec.NodeName != "somewhere" || tmpl.Annotations != nil {
		t.Errorf("the template was modified: %+v", tmpl)
	}
}

func TestYields(t *testing.T) {
	for _, tc := range []struct {
		annotation string
		set        bool
		virtual    bool
		yields     bool
	}{
		{annotation: "CapacityBuffer/team/warm", set: true, virtual: true, yields: true},
		{annotation: "ProvisioningRequest/team/job", set: true, virtual: true, yields: false},
		{annotation: "SomethingNew/team/x", set: true, virtual: true, yields: false},
		{annotation: "malformed", set: true, virtual: true, yields: false},
		{set: false},
	} {
		t.Run(tc.annotation, func(t *testing.T) {
			p := &corev1.Pod{}
			if tc.set {
				p.Annotations = map[string]string{state.VirtualPodAnnotationKey: tc.annotation}
			}
			if got := state.IsVirtual(p); got != tc.virtual {
				t.Errorf("IsVirtual = %t, want %t", got, tc.virtual)
			}
			if got := state.Yields(p); got != tc.yields {
				t.Errorf("Yields = %t, want %t", got, tc.yields)
			}
		})
	}
}

func TestBuildSolvesVirtualPodsApart(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	unmarked := state.NewVirtualPod(state.KindCapacityBuffer, "team", "lost", 0, tmpl)
	delete(unmarked.Annotations, state.VirtualPodAnnotationKey)
	objs := state.Objects{VirtualPods: []corev1.Pod{
		state.NewVirtualPod(state.KindCapacityBuffer, "team", "warm", 0, tmpl),
		state.NewVirtualPod("ProvisioningRequest", "team", "job", 0, tmpl),
		unmarked,
	}}
	s := state.Build(objs, nil, []string{corev1.DefaultSchedulerName})
	names := func(ps []*corev1.Pod) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	got := map[string][]string{"pods": names(s.Input.Pods), "holding": names(s.Input.Holding), "yielding": names(s.Input.Yielding)}
	want := map[string][]string{"pods": nil, "holding": {"job-virtual-0"}, "yielding": {"warm-virtual-0"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshot pods (-want +got):\n%s", diff)
	}
}
