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
	timeouts := Timeouts{Launch: 5 * time.Minute, Registration: 15 * time.Minute}
	created := func(nc *v1.NodeClaim) *v1.NodeClaim {
		nc.CreationTimestamp = metav1.NewTime(t0)
		return nc
	}
	// refused failed its first launch at t0+10s.
	refused := created(claimWith())
	refused.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionFalse, Reason: "UnauthorizedOperation", LastTransitionTime: metav1.NewTime(t0.Add(10 * time.Second))}}
	none := LaunchAttempts{}
	for _, tc := range []struct {
		name     string
		nc       *v1.NodeClaim
		node     *corev1.Node
		now      time.Time
		attempts LaunchAttempts
		action   Action
		wait     time.Duration
	}{
		{"not launched", claimWith(), nil, t0, none, Launch, 0},
		{"not launched, no creation time: no launch timeout", claimWith(), nil, t0.Add(time.Hour), none, Launch, 0},
		{"created, not tried yet", created(claimWith()), nil, t0.Add(time.Minute), none, Launch, 0},
		{"created, never launched within the timeout", created(claimWith()), nil, t0.Add(5 * time.Minute), none, LaunchTimeout, 0},
		{"refused once, within the backoff", refused, nil, t0.Add(10*time.Second + 500*time.Millisecond), LaunchAttempts{Failures: 1, Last: t0.Add(10 * time.Second)}, Wait, 500 * time.Millisecond},
		{"refused once, backoff over", refused, nil, t0.Add(11 * time.Second), LaunchAttempts{Failures: 1, Last: t0.Add(10 * time.Second)}, Launch, 0},
		{"refused four times: waits 8s", refused, nil, t0.Add(time.Minute), LaunchAttempts{Failures: 4, Last: t0.Add(time.Minute)}, Wait, 8 * time.Second},
		{"the timeout counts from the first failure, not creation", refused, nil, t0.Add(5 * time.Minute), LaunchAttempts{Failures: 9, Last: t0.Add(4*time.Minute + 30*time.Second)}, Wait, 10 * time.Second},
		{"launch timeout", refused, nil, t0.Add(5*time.Minute + 10*time.Second), LaunchAttempts{Failures: 9, Last: t0.Add(5 * time.Minute)}, LaunchTimeout, 0},
		{"the timeout cuts the backoff short", refused, nil, t0.Add(4*time.Minute + 50*time.Second), LaunchAttempts{Failures: 9, Last: t0.Add(4*time.Minute + 50*time.Second)}, Wait, 20 * time.Second},
		{"timeout passed while no attempt is remembered (a restart)", refused, nil, t0.Add(6 * time.Minute), none, LaunchTimeout, 0},
		{"launched, waiting for its node", claimWith(v1.ConditionTypeLaunched), nil, t0.Add(time.Minute), none, Wait, 14 * time.Minute},
		{"launched long after creation: no launch timeout", created(claimWith(v1.ConditionTypeLaunched)), nil, t0.Add(10 * time.Minute), none, Wait, 5 * time.Minute},
		{"node joined", claimWith(v1.ConditionTypeLaunched), readyNode(), t0.Add(time.Minute), none, Register, 0},
		{"liveness timeout", claimWith(v1.ConditionTypeLaunched), nil, t0.Add(timeouts.Registration), none, Expire, 0},
		{"registered, node ready", claimWith(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered), readyNode(), t0, none, Initialize, 0},
		{"registered, node not ready", claimWith(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered), &corev1.Node{}, t0, none, Wait, 0},
		{"initialized", claimWith(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized), readyNode(), t0, none, Done, 0},
	} {
		action, wait := Next(tc.nc, tc.node, tc.now, timeouts, tc.attempts)
		if action != tc.action || wait != tc.wait {
			t.Errorf("%s: Next = %v, %v; want %v, %v", tc.name, action, wait, tc.action, tc.wait)
		}
	}
}

func TestLaunchBackoff(t *testing.T) {
	var got []time.Duration
	for failures := range 10 {
		got = append(got, LaunchBackoff(failures+1))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute, time.Minute, time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LaunchBackoff (-want +got):\n%s", diff)
	}
	a := LaunchAttempts{}.Failed(t0).Failed(t0.Add(time.Second))
	if want := (LaunchAttempts{Failures: 2, Last: t0.Add(time.Second)}); a != want {
		t.Errorf("two failures = %+v, want %+v", a, want)
	}
	if got, want := a.RetryAt(), t0.Add(3*time.Second); !got.Equal(want) {
		t.Errorf("RetryAt = %s, want %s", got, want)
	}
	if got := (LaunchAttempts{}).RetryAt(); !got.IsZero() {
		t.Errorf("RetryAt with no failure = %s, want zero", got)
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
