package explain

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/provreq"
	"github.com/capstan-dev/capstan/pkg/state"
)

// A booked atomic request: provisioned at 12:00, one of its two pods
// bound at 12:04; half of its 10-minute booking is left at 12:05.
func TestForProvisioningRequestBooked(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pr := &autoscalingv1.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", CreationTimestamp: metav1.NewTime(t0.Add(-time.Minute))}}
	pr.Spec.ProvisioningClassName = autoscalingv1.ProvisioningClassBestEffortAtomicScaleUp
	pr.Spec.PodSets = []autoscalingv1.PodSet{{PodTemplateRef: autoscalingv1.Reference{Name: "w"}, Count: 2}}
	pr.Status.Conditions = []metav1.Condition{{Type: autoscalingv1.Provisioned, Status: metav1.ConditionTrue, Reason: provreq.ReasonCapacityIsProvisioned,
		Message: "Capacity is provisioned: 1 NodeClaims registered", LastTransitionTime: metav1.NewTime(t0)}}
	tmpl := &corev1.PodTemplate{}
	tmpl.Template.Spec.Containers = []corev1.Container{{Name: "w", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}
	bound := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}}
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue}, {Type: v1.ConditionTypeRegistered, Status: metav1.ConditionTrue}}
	got := ForProvisioningRequest(provreq.Request{Object: pr, Templates: map[string]*corev1.PodTemplate{"w": tmpl}, Consumers: []*corev1.Pod{bound}, Claims: []*v1.NodeClaim{nc}},
		state.Snapshot{}, t0.Add(5*time.Minute))
	want := ProvisioningRequest{Status: provreq.Status{Name: "ns/job", Class: autoscalingv1.ProvisioningClassBestEffortAtomicScaleUp, Phase: "Booked",
		Reason: provreq.ReasonCapacityIsProvisioned, Message: "Capacity is provisioned: 1 NodeClaims registered"},
		Pods: 2, Consumers: 1, Bound: 1, VirtualPods: 1, NodeClaims: []RequestClaim{{Name: "a", Launched: true, Registered: true}}, BookingLeft: "5m0s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("explanation (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := WriteProvisioningRequest(&b, got); err != nil {
		t.Fatal(err)
	}
	wantText := `ProvisioningRequest ns/job (best-effort-atomic-scale-up.autoscaling.x-k8s.io)
  Booked: CapacityIsProvisioned: Capacity is provisioned: 1 NodeClaims registered
  pods: 2 asked, 1 consuming it (1 bound), 1 held as virtual pods
  nodeclaim a: launched true, registered true
  booking: 5m0s left
`
	if diff := cmp.Diff(wantText, b.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}
