package invariants

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// t0 is when every test's world starts; at(s) is s seconds later.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

var app = map[string]string{"app": "web"}

// pod is a Ready pod of app in namespace ns on node n, then mods.
func pod(name string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: app}, Spec: corev1.PodSpec{NodeName: "n"}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	for _, m := range mods {
		m(p)
	}
	return p
}

func notReady(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }

func terminating(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} }

func unbound(p *corev1.Pod) {
	p.Spec.NodeName = ""
	notReady(p)
}

func on(node string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Spec.NodeName = node } }

func annotated(key, value string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Annotations = map[string]string{key: value} }
}

// claim is a NodeClaim of NodePool np, then mods.
func claim(name string, mods ...func(*v1.NodeClaim)) *v1.NodeClaim {
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: "np"}}}
	for _, m := range mods {
		m(nc)
	}
	return nc
}

func initialized(nc *v1.NodeClaim) {
	nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue})
}

func deleting(nc *v1.NodeClaim) { nc.DeletionTimestamp = &metav1.Time{Time: t0} }

func disrupted(r v1.DisruptionReason) func(*v1.NodeClaim) {
	return func(nc *v1.NodeClaim) {
		nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: string(r), Message: "test"})
	}
}

func onNode(node string) func(*v1.NodeClaim) {
	return func(nc *v1.NodeClaim) { nc.Status.NodeName = node }
}

func launched(providerID string) func(*v1.NodeClaim) {
	return func(nc *v1.NodeClaim) { nc.Status.ProviderID = providerID }
}

func inReservation(id string) func(*v1.NodeClaim) {
	return func(nc *v1.NodeClaim) {
		nc.Labels[v1.CapacityTypeLabelKey] = v1.CapacityTypeReserved
		nc.Labels[v1.LabelCapacityReservationID] = id
	}
}

// expectViolations fails unless c found exactly want violations, each
// naming every one of its objects.
func expectViolations(t *testing.T, c *Checker, want int, objects ...string) {
	t.Helper()
	got := c.Violations()
	if len(got) != want {
		t.Fatalf("want %d violations, got %d: %q", want, len(got), got)
	}
	for _, v := range got {
		for _, o := range objects {
			if !strings.Contains(v, o) {
				t.Errorf("violation %q does not name %s", v, o)
			}
		}
	}
}

func conditionTrue(typ string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue}
}
