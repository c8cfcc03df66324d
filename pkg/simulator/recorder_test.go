package simulator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

func TestRecorder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newRecorder(t0)
	// A reason is reported once, until it changes.
	r.pending(t0, "ns/a", true, "NoInstanceTypeFits", "too big")
	r.pending(t0.Add(time.Minute), "ns/a", true, "NoInstanceTypeFits", "too big")
	r.pending(t0.Add(2*time.Minute), "ns/a", true, "NodePoolLimitExceeded", "limits")
	if got := len(r.events); got != 2 {
		t.Errorf("%d events for two distinct reasons", got)
	}
	if r.reasons["ns/a"] != "NodePoolLimitExceeded: limits" {
		t.Errorf("reason %q", r.reasons["ns/a"])
	}
	// A nomination is the pod's reason while it waits, with no event;
	// the warning before it is not reported again after it.
	r.pending(t0.Add(3*time.Minute), "ns/a", false, "Nominated", "pod should schedule on nodeclaim x")
	r.pending(t0.Add(4*time.Minute), "ns/a", true, "NodePoolLimitExceeded", "limits")
	if got := len(r.events); got != 2 {
		t.Errorf("%d events; a nomination or a repeated warning is not one", got)
	}
	r.pending(t0.Add(5*time.Minute), "ns/a", false, "Nominated", "pod should schedule on nodeclaim x")
	if r.reasons["ns/a"] != "Nominated: pod should schedule on nodeclaim x" {
		t.Errorf("reason %q after a nomination", r.reasons["ns/a"])
	}
	r.bound("ns/a")
	if _, ok := r.reasons["ns/a"]; ok {
		t.Error("a bound pod keeps its pending reason")
	}

	// Samples are taken on change only; one per instant.
	r.sample(t0, 3)
	r.sample(t0.Add(time.Second), 3)
	nc := &v1.NodeClaim{}
	nc.Name = "default-abcde"
	nc.Labels = map[string]string{v1.CapacityTypeLabelKey: v1.CapacityTypeSpot}
	nc.Status.ProviderID = "sim://a/i-1"
	r.launched(t0.Add(time.Minute), nc, 0.5)
	// The Launched event is the lifecycle's (an effects.Event).
	r.event(t0.Add(time.Minute), "Launched", "nodeclaim/"+nc.Name, "launched")
	r.sample(t0.Add(time.Minute), 3)
	r.sample(t0.Add(time.Minute), 0)
	want := []Sample{
		{At: "0s", Nodes: byCapacityType(), PodsPending: 3},
		{At: "1m0s", Seconds: 60, Nodes: map[string]int{"spot": 1, "on-demand": 0, "reserved": 0}, CostPerHour: 0.5},
	}
	if diff := cmp.Diff(want, r.samples); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}

	// A notice is reported when acted on and names why the node ended.
	n := cloudprovider.InterruptionNotice{Kind: cloudprovider.SpotInterruption, ProviderID: "sim://a/i-1", Deadline: t0.Add(3 * time.Minute)}
	r.notice(t0.Add(time.Minute), n, "interrupted")
	r.notice(t0.Add(2*time.Minute), n, "")
	if got := r.endReason("sim://a/i-1", "InstanceTerminated"); got != "SpotInterruption" {
		t.Errorf("end reason %q", got)
	}
	r.deleted(t0.Add(3*time.Minute), nc.Name, "SpotInterruption", nil)
	rec := r.nodes[nc.Name]
	if rec.DeletedAt != "3m0s" || !rec.ended.Equal(t0.Add(3*time.Minute)) || len(r.running()) != 0 {
		t.Errorf("deleted record %+v", rec)
	}
	var kinds []string
	for _, e := range r.events[2:] {
		kinds = append(kinds, e.Kind)
	}
	if diff := cmp.Diff([]string{"Launched", "SpotInterruption", "NodeDeleted"}, kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestRecordsAreInLaunchOrder: records come by launch time, then name,
// however launches at one instant arrive; a stop is found by provider id.
func TestRecordsAreInLaunchOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newRecorder(t0)
	for i, name := range []string{"c", "b", "a"} {
		nc := &v1.NodeClaim{}
		nc.Name, nc.Status.ProviderID = name, "sim://"+name
		at := t0
		if name == "c" {
			at = t0.Add(time.Minute)
		}
		r.launched(at, nc, float64(i))
	}
	var got []string
	for _, rec := range r.records() {
		got = append(got, rec.NodeClaim)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	node := &corev1.Node{}
	node.Name, node.Spec.ProviderID = "b", "sim://b"
	if !r.stop(t0, node) || r.stop(t0, node) {
		t.Error("a stop is not recorded exactly once")
	}
	if at, ok := r.evictAt(node); !ok || !at.Equal(t0.Add(notEvictedFor)) {
		t.Errorf("eviction at %v, %v", at, ok)
	}
}

// The report follows a node by its Node once it registered: a NodeClaim's
// later events show there, and an event the controller records on both
// shows once; earlier ones stay on the NodeClaim.
func TestRecorderReportsEventsOnTheNode(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newRecorder(t0)
	nc := &v1.NodeClaim{}
	nc.Name = "default-abcde"
	nc.Status.ProviderID = "sim://a/i-1"
	r.launched(t0, nc, 0.5)
	r.event(t0, "Launched", "nodeclaim/default-abcde", "launched")
	r.registered("default-abcde", "sim-1")
	at := t0.Add(time.Minute)
	r.event(at, "DisruptionTerminating", "nodeclaim/default-abcde", "Emptiness (Empty): deleting the node")
	r.event(at, "DisruptionTerminating", "node/sim-1", "Emptiness (Empty): deleting the node")
	r.event(at, "DisruptionBlocked", "nodeclaim/default-abcde", "Drift abandoned: a candidate is gone")
	want := []Event{
		{At: "0s", Kind: "Launched", Object: "nodeclaim/default-abcde", Message: "launched"},
		{At: "1m0s", Kind: "DisruptionTerminating", Object: "node/sim-1", Message: "Emptiness (Empty): deleting the node"},
		{At: "1m0s", Kind: "DisruptionBlocked", Object: "node/sim-1", Message: "Drift abandoned: a candidate is gone"},
	}
	if diff := cmp.Diff(want, r.reported()); diff != "" {
		t.Errorf("reported events (-want +got):\n%s", diff)
	}
}
