package lifecycle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func claimWith(conds ...string) *v1.NodeClaim {
	nc := &v1.NodeClaim{}
	for _, c := range conds {
		nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)})
	}
	return nc
}

func readyNode(mods ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	for _, m := range mods {
		m(n)
	}
	return n
}

func TestNext(t *testing.T) {
	ttl := 15 * time.Minute
	for _, tc := range []struct {
		name   string
		nc     *v1.NodeClaim
		node   *corev1.Node
		now    time.Time
		action Action
		wait   time.Duration
	}{
		{"not launched", claimWith(), nil, t0, Launch, 0},
		{"launched, waiting for its node", claimWith(v1.ConditionTypeLaunched), nil, t0.Add(time.Minute), Wait, 14 * time.Minute},
		{"node joined", claimWith(v1.ConditionTypeLaunched), readyNode(), t0.Add(time.Minute), Register, 0},
		{"liveness timeout", claimWith(v1.ConditionTypeLaunched), nil, t0.Add(ttl), Expire, 0},
		{"registered, node ready", claimWith(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered), readyNode(), t0, Initialize, 0},
		{"registered, node not ready", claimWith(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered), &corev1.Node{}, t0, Wait, 0},
		{"initialized", claimWith(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized), readyNode(), t0, Done, 0},
	} {
		action, wait := Next(tc.nc, tc.node, tc.now, ttl)
		if action != tc.action || wait != tc.wait {
			t.Errorf("%s: Next = %v, %v; want %v, %v", tc.name, action, wait, tc.action, tc.wait)
		}
	}
}

func TestInitialized(t *testing.T) {
	startup := corev1.Taint{Key: "cni", Effect: corev1.TaintEffectNoSchedule}
	gpu := &v1.NodeClaim{}
	gpu.Spec.Resources.Requests = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"), corev1.ResourceCPU: resource.MustParse("1")}
	withStartup := &v1.NodeClaim{}
	withStartup.Spec.StartupTaints = []corev1.Taint{startup}
	for _, tc := range []struct {
		name string
		nc   *v1.NodeClaim
		node *corev1.Node
		want bool
	}{
		{"ready", &v1.NodeClaim{}, readyNode(), true},
		{"not ready", &v1.NodeClaim{}, &corev1.Node{}, false},
		{"startup taint still there", withStartup, readyNode(func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{startup} }), false},
		{"startup taint gone", withStartup, readyNode(), true},
		{"Ready, not-ready taint not lifted yet", &v1.NodeClaim{}, readyNode(func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}
		}), false},
		{"cloud provider has not initialized it", &v1.NodeClaim{}, readyNode(func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
		}), false},
		{"GPUs not reported yet", gpu, readyNode(), false},
		{"GPUs reported", gpu, readyNode(func(n *corev1.Node) {
			n.Status.Allocatable = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		}), true},
	} {
		if got := Initialized(tc.nc, tc.node); got != tc.want {
			t.Errorf("%s: Initialized = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSyncNode(t *testing.T) {
	nc := &v1.NodeClaim{}
	nc.Labels = map[string]string{v1.NodePoolLabelKey: "default", "team": "ml"}
	nc.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoSchedule}}
	node := &corev1.Node{}
	node.Labels = map[string]string{corev1.LabelHostname: "n1"}
	node.Spec.Taints = []corev1.Taint{v1.UnregisteredNoExecuteTaint(), {Key: "cni", Effect: corev1.TaintEffectNoSchedule}}
	got, changed := SyncNode(nc, node)
	if !changed {
		t.Fatal("nothing changed")
	}
	if diff := cmp.Diff([]corev1.Taint{{Key: "cni", Effect: corev1.TaintEffectNoSchedule}, nc.Spec.Taints[0]}, got.Spec.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{corev1.LabelHostname: "n1", v1.NodePoolLabelKey: "default", "team": "ml", v1.NodeRegisteredLabelKey: "true"}, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{v1.TerminationFinalizer}, got.Finalizers); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
	if _, again := SyncNode(nc, got); again {
		t.Errorf("syncing a synced node changes it")
	}
	optOut := node.DeepCopy()
	optOut.Labels[v1.DoNotSyncTaintsLabelKey] = "true"
	got, _ = SyncNode(nc, optOut)
	if len(got.Spec.Taints) != 1 {
		t.Errorf("do-not-sync-taints: taints %v", got.Spec.Taints)
	}
}

func TestNeedsPodEventUpdate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		last metav1.Time
		now  time.Time
		want bool
	}{
		{metav1.Time{}, t0, true},
		{metav1.NewTime(t0), t0.Add(5 * time.Second), false},
		{metav1.NewTime(t0), t0.Add(PodEventDedupe), true},
	} {
		if got := NeedsPodEventUpdate(tc.last, tc.now); got != tc.want {
			t.Errorf("NeedsPodEventUpdate(%v, %v) = %v, want %v", tc.last, tc.now, got, tc.want)
		}
	}
}
