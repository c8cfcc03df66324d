package simulator

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

func TestBatchWindows(t *testing.T) {
	w := scaleup.Window{Idle: time.Second, Max: 10 * time.Second}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var b scaleup.Batch
	if due(&b, w, t0) {
		t.Fatal("due with no batch open")
	}
	if _, ok := b.Next(w, t0); ok {
		t.Fatal("a wake-up with no batch open")
	}
	b.Trigger(t0, false)
	if next, ok := b.Next(w, t0); !ok || !next.Equal(t0.Add(time.Second)) {
		t.Errorf("next %v, want the idle window's end", next)
	}
	if due(&b, w, t0.Add(500*time.Millisecond)) {
		t.Error("due before the idle window ended")
	}
	if !due(&b, w, t0.Add(time.Second)) {
		t.Error("not due once the idle window ended")
	}
	if due(&b, w, t0.Add(time.Hour)) {
		t.Error("a closed batch is due again")
	}
	// A re-check reopens after Max, as the controller's RequeueAfter does.
	b.Solved(scaleup.Decision{Result: provisioning.Result{Nominations: []provisioning.Nomination{{}}}}, w, t0.Add(10*time.Second))
	if next, ok := b.Next(w, t0.Add(11*time.Second)); !ok || !next.Equal(t0.Add(20*time.Second)) {
		t.Errorf("next %v, want the re-check", next)
	}
	if !due(&b, w, t0.Add(20*time.Second)) {
		t.Error("re-check not due")
	}
	// A failed launch re-plans at once.
	b.Trigger(t0.Add(30*time.Second), true)
	if !due(&b, w, t0.Add(30*time.Second)) {
		t.Error("an immediate trigger waits for the window")
	}
}

func due(b *scaleup.Batch, w scaleup.Window, now time.Time) bool {
	due, _ := b.Due(w, now)
	return due
}

func TestDaemonSetPodsRunWhereTheyFit(t *testing.T) {
	node := &corev1.Node{}
	node.Labels = map[string]string{"kubernetes.io/os": "linux"}
	node.Spec.Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	for _, tc := range []struct {
		name string
		pod  corev1.PodSpec
		want bool
	}{
		{"untolerated taint", corev1.PodSpec{}, false},
		{"tolerated", corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}, true},
		{"selector mismatch", corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/os": "windows"}, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}, false},
	} {
		if got := runsOn(&corev1.Pod{Spec: tc.pod}, node); got != tc.want {
			t.Errorf("%s: runsOn %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Binding keeps each node's pods across wakes; a pod that binds to or
// leaves a node must be in the next snapshot, as state.Build would have
// it from scratch.
func TestBinderInputFollowsPodsBindingAndLeaving(t *testing.T) {
	w := newWorld(&manifests.Set{})
	node := &corev1.Node{}
	node.Name, node.Status.Allocatable = "n1", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("10")}
	w.setNode(node)
	pod := func(name, cpu string) *corev1.Pod {
		p := &corev1.Pod{}
		p.Name, p.Namespace = name, "team"
		p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}
		w.addPod(p)
		return p
	}
	s := &Simulator{world: w}
	a, b := pod("a", "1"), pod("b", "2")
	w.bindPod(a, "n1")
	requested := func() (int64, []string) {
		in := s.binderInput()
		var pending []string
		for _, p := range in.Pods {
			pending = append(pending, p.Name)
		}
		return in.Nodes[0].Requested.CPU, pending
	}
	steps := []struct {
		name        string
		change      func()
		wantCPU     int64
		wantPending []string
	}{
		{"a bound", func() {}, 1000, []string{"b"}},
		{"b bound", func() { w.bindPod(b, "n1") }, 3000, nil},
		{"a deleted", func() { w.deletePod(a) }, 2000, nil},
		{"c pending", func() { pod("c", "1") }, 2000, []string{"c"}},
	}
	for _, st := range steps {
		st.change()
		cpu, pending := requested()
		if cpu != st.wantCPU || !slices.Equal(pending, st.wantPending) {
			t.Errorf("%s: node requests %dm CPU with %v pending, want %dm with %v", st.name, cpu, pending, st.wantCPU, st.wantPending)
		}
	}
}
