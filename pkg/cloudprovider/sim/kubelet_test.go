package sim_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

func TestMemoryKubeletRegistersWhenDue(t *testing.T) {
	k := sim.NewMemoryKubelet()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, d := range []time.Duration{time.Second, 3 * time.Second} {
		n := &corev1.Node{}
		n.Name = []string{"a", "b"}[i]
		k.Launch(context.Background(), n, start.Add(d))
	}
	if next, ok := k.Next(); !ok || !next.Equal(start.Add(time.Second)) {
		t.Errorf("next registration at %v, %v; want 1s after start", next, ok)
	}
	if due := k.Due(start); len(due) != 0 {
		t.Errorf("registered early: %v", due)
	}
	if due := k.Due(start.Add(2 * time.Second)); len(due) != 1 || due[0].Name != "a" {
		t.Errorf("at 2s: %v", due)
	}
	if next, ok := k.Next(); !ok || !next.Equal(start.Add(3*time.Second)) {
		t.Errorf("next registration at %v, %v; want 3s after start", next, ok)
	}
	if due := k.Due(start.Add(time.Hour)); len(due) != 1 || due[0].Name != "b" {
		t.Errorf("later: %v", due)
	}
	if _, ok := k.Next(); ok {
		t.Error("a registration is still queued")
	}
	k.Stop(context.Background(), "a")
	if !k.Stopped("a") || k.Stopped("b") {
		t.Errorf("stopped: a %v b %v", k.Stopped("a"), k.Stopped("b"))
	}
}

// An instance that stops before its Node registered never registers it,
// as with simapi.Kubelet.
func TestMemoryKubeletStoppedBeforeRegistering(t *testing.T) {
	k := sim.NewMemoryKubelet()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, name := range []string{"a", "b"} {
		n := &corev1.Node{}
		n.Name = name
		k.Launch(context.Background(), n, start.Add(time.Minute))
	}
	k.Stop(context.Background(), "a")
	due := k.Due(start.Add(time.Hour))
	if len(due) != 1 || due[0].Name != "b" {
		t.Errorf("registered %v, want only b", due)
	}
	if _, ok := k.Next(); ok {
		t.Error("a registration is still queued")
	}
}
