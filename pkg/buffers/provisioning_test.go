package buffers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
)

func TestPlacements(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{}
	warm := func(i int) *corev1.Pod {
		p := state.NewVirtualPod(state.KindCapacityBuffer, "team", "warm", i, tmpl)
		return &p
	}
	booked := state.NewVirtualPod("ProvisioningRequest", "team", "job", 0, tmpl)
	real := &corev1.Pod{}
	got := Placements(
		[]provisioning.Nomination{{Pod: warm(0), NodeName: "a"}, {Pod: warm(1), NodeName: "a"}, {Pod: &booked, NodeName: "a"}, {Pod: real, NodeName: "a"}},
		[]*provisioning.NodeClaim{{Pods: []*corev1.Pod{warm(2), real}}},
		[]provisioning.Unplaced{{Pod: warm(3), Reason: provisioning.ReasonNodePoolLimitExceeded}},
	)
	key := types.NamespacedName{Namespace: "team", Name: "warm"}
	if diff := cmp.Diff([]types.NamespacedName{key}, mapKeys(got)); diff != "" {
		t.Fatalf("buffers (-want +got):\n%s", diff)
	}
	p := got[key]
	if p.Fitting() != 2 || p.Existing["a"] != 2 || p.New != 1 || len(p.Unplaced) != 1 {
		t.Errorf("placement %+v: want 2 on a, 1 new, 1 unplaced", p)
	}
}

func mapKeys(m map[types.NamespacedName]Placement) []types.NamespacedName {
	var out []types.NamespacedName
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The Provisioning condition as the reference computes it
// (pkg/controllers/provisioning/buffers.go, v1.14.1).
func TestProvisioning(t *testing.T) {
	ready := func(n int32) *autoscalingv1beta1.CapacityBuffer {
		cb := templated(replicas(n))
		cb.Status = Size(Input{Buffer: cb, Source: Source{Template: chunk("1", "1Gi")}, Now: now}).Status
		return cb
	}
	notReady := templated(replicas(2))
	notReady.Status = Size(Input{Buffer: notReady, Source: Source{Reason: ReasonPodTemplateNotFound}, Now: now}).Status
	for _, tc := range []struct {
		name   string
		buffer *autoscalingv1beta1.CapacityBuffer
		place  Placement
		want   *condition
	}{
		{"all fit existing capacity", ready(2), Placement{Existing: map[string]int{"a": 1, "b": 1}},
			&condition{autoscalingv1beta1.ConditionProvisioning, "True", ReasonFitsExistingCapacity, 3}},
		{"some need a new node", ready(2), Placement{Existing: map[string]int{"a": 1}, New: 1},
			&condition{autoscalingv1beta1.ConditionProvisioning, "False", ReasonRequiresNewCapacity, 3}},
		{"some fit nowhere", ready(2), Placement{Existing: map[string]int{"a": 1}, Unplaced: []provisioning.Unplaced{{Reason: provisioning.ReasonNodePoolLimitExceeded}}},
			&condition{autoscalingv1beta1.ConditionProvisioning, "False", ReasonRequiresNewCapacity, 3}},
		{"not ready", notReady, Placement{}, &condition{autoscalingv1beta1.ConditionProvisioning, "False", ReasonNotReadyForProvisioning, 3}},
		{"empty", ready(0), Placement{}, &condition{autoscalingv1beta1.ConditionProvisioning, "False", ReasonBufferEmpty, 3}},
		{"not solved yet", ready(3), Placement{Existing: map[string]int{"a": 1}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := tc.buffer.Status.DeepCopy()
			Provisioning(tc.buffer, status, tc.place, now)
			var got *condition
			for _, c := range conditions(status.Conditions) {
				if c.Type == autoscalingv1beta1.ConditionProvisioning {
					got = &c
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Provisioning (-want +got):\n%s", diff)
			}
		})
	}
}
