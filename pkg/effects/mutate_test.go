package effects

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestMutations(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	nc := &v1.NodeClaim{}
	nc.Labels = map[string]string{"a": "1", "gone": "x"}
	nc.Finalizers = []string{"x"}
	MergeInto(nc, MergeMetadata{Labels: map[string]string{"b": "2"}, Annotations: map[string]string{"c": "3"}, Finalizers: []string{"x", "y"}})
	RemoveLabelsFrom(nc, []string{"gone", "absent"})
	RemoveFinalizerFrom(nc, "x")
	SetStatusInto(nc, SetNodeClaimStatus{ProviderID: "sim://a/i-1", NodeName: "n1"})
	SetStatusInto(nc, SetNodeClaimStatus{ImageID: "ami-1"})
	if err := SetConditionInto(nc, metav1.Condition{Type: "A", Status: metav1.ConditionTrue, LastTransitionTime: at}, false); err != nil {
		t.Fatal(err)
	}
	if err := SetConditionInto(nc, metav1.Condition{Type: "B", Status: metav1.ConditionTrue, LastTransitionTime: at}, false); err != nil {
		t.Fatal(err)
	}
	if err := SetConditionInto(nc, metav1.Condition{Type: "A"}, true); err != nil {
		t.Fatal(err)
	}
	want := &v1.NodeClaim{}
	want.Labels = map[string]string{"a": "1", "b": "2"}
	want.Annotations = map[string]string{"c": "3"}
	want.Finalizers = []string{"y"}
	want.Status.ProviderID, want.Status.NodeName, want.Status.ImageID = "sim://a/i-1", "n1", "ami-1"
	want.Status.Conditions = []metav1.Condition{{Type: "B", Status: metav1.ConditionTrue, LastTransitionTime: at}}
	if diff := cmp.Diff(want, nc); diff != "" {
		t.Errorf("nodeclaim (-want +got):\n%s", diff)
	}
	if err := SetConditionInto(&corev1.Node{}, metav1.Condition{Type: "A"}, false); err == nil {
		t.Error("a condition set on a Node")
	}

	node := &corev1.Node{}
	keep := corev1.Taint{Key: "keep", Effect: corev1.TaintEffectNoSchedule}
	node.Spec.Taints = []corev1.Taint{keep, {Key: "gone", Effect: corev1.TaintEffectNoExecute}}
	PatchNodeInto(node, PatchNode{Labels: map[string]string{"l": "v"}, Finalizers: []string{"f"},
		AddTaints: []corev1.Taint{keep, v1.DisruptedNoScheduleTaint()}, RemoveTaints: []corev1.Taint{{Key: "gone", Effect: corev1.TaintEffectNoExecute}}})
	if diff := cmp.Diff([]corev1.Taint{keep, v1.DisruptedNoScheduleTaint()}, node.Spec.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	if node.Labels["l"] != "v" || len(node.Finalizers) != 1 {
		t.Errorf("node %+v", node.ObjectMeta)
	}
}
