package lifecycle

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/gang"
)

func TestReleaseGroups(t *testing.T) {
	start := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	timeout := DefaultAtomicGroupLaunchTimeout
	// claim is NodeClaim i of a 3-NodeClaim launch of gang ml/train,
	// created at start, changed by mods.
	claim := func(i int, mods ...func(*v1.NodeClaim)) *v1.NodeClaim {
		nc := &v1.NodeClaim{}
		nc.Name = fmt.Sprintf("gpu-%d", i)
		nc.CreationTimestamp = metav1.NewTime(start)
		nc.Annotations = map[string]string{
			gang.AtomicGroupAnnotationKey: "ml/train", gang.AtomicGroupSizeAnnotationKey: "3", gang.AtomicGroupLaunchAnnotationKey: "gpu-0",
		}
		for _, m := range mods {
			m(nc)
		}
		return nc
	}
	launched := func(nc *v1.NodeClaim) {
		nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched"})
	}
	onNode := func(name string) func(*v1.NodeClaim) {
		return func(nc *v1.NodeClaim) { nc.Status.NodeName = name }
	}
	deleting := func(nc *v1.NodeClaim) { nc.DeletionTimestamp = ptr.To(metav1.NewTime(start.Add(time.Second))) }
	refused := func(nc *v1.NodeClaim) {
		nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionFalse, Reason: "LaunchFailed", Message: "no profile"}}
	}
	complete := func(nc *v1.NodeClaim) { nc.Annotations[gang.AtomicGroupLaunchedAnnotationKey] = "2026-01-01T01:00:30Z" }
	released := func(why string, names ...string) []effects.Effect {
		var out []effects.Effect
		for _, n := range names {
			out = append(out,
				effects.Event{Object: effects.NodeClaimRef(n), Type: corev1.EventTypeWarning, Reason: "AtomicGroupReleased", Action: "Delete",
					Message: "gang ml/train: " + why + "; the NodeClaims of launch gpu-0 that run no pod are released"},
				effects.DeleteNodeClaim{Name: n, Reason: DeletedAtomicGroupReleased})
		}
		return append(out, effects.TriggerSolve{Immediate: true})
	}
	for _, tc := range []struct {
		name    string
		claims  []*v1.NodeClaim
		running map[string]bool
		now     time.Time
		want    []effects.Effect
	}{
		{
			name:   "under way: come back at the timeout",
			claims: []*v1.NodeClaim{claim(0, launched), claim(1), claim(2)},
			now:    start.Add(time.Minute),
			want:   []effects.Effect{effects.RequeueAt{At: start.Add(timeout)}},
		},
		{
			name:   "all launched: marked complete",
			claims: []*v1.NodeClaim{claim(0, launched), claim(1, launched), claim(2, launched)},
			now:    start.Add(time.Minute),
			want: []effects.Effect{
				effects.MergeMetadata{Object: effects.NodeClaimRef("gpu-0"), Annotations: map[string]string{gang.AtomicGroupLaunchedAnnotationKey: "2026-01-01T01:01:00Z"}},
				effects.MergeMetadata{Object: effects.NodeClaimRef("gpu-1"), Annotations: map[string]string{gang.AtomicGroupLaunchedAnnotationKey: "2026-01-01T01:01:00Z"}},
				effects.MergeMetadata{Object: effects.NodeClaimRef("gpu-2"), Annotations: map[string]string{gang.AtomicGroupLaunchedAnnotationKey: "2026-01-01T01:01:00Z"}},
			},
		},
		{
			name:   "complete: a NodeClaim deleted later releases nothing",
			claims: []*v1.NodeClaim{claim(0, launched, complete), claim(1, launched, complete, deleting)},
			now:    start.Add(time.Hour),
		},
		{
			name:   "one deleted for want of capacity: the others are released",
			claims: []*v1.NodeClaim{claim(0, launched), claim(1, launched), claim(2, deleting)},
			now:    start.Add(2 * time.Second),
			want:   released("NodeClaim gpu-2 was deleted", "gpu-0", "gpu-1"),
		},
		{
			name:    "a NodeClaim whose node runs a pod is kept",
			claims:  []*v1.NodeClaim{claim(0, launched, onNode("n-0")), claim(1, launched, onNode("n-1")), claim(2, deleting)},
			running: map[string]bool{"n-0": true},
			now:     start.Add(2 * time.Second),
			want:    released("NodeClaim gpu-2 was deleted", "gpu-1"),
		},
		{
			name:   "a refused launch",
			claims: []*v1.NodeClaim{claim(0, launched), claim(1, refused), claim(2)},
			now:    start.Add(2 * time.Second),
			want:   released("NodeClaim gpu-1 failed to launch (LaunchFailed: no profile)", "gpu-0", "gpu-1", "gpu-2"),
		},
		{
			name:   "a NodeClaim missing before the launch settles: wait",
			claims: []*v1.NodeClaim{claim(0, launched), claim(1, launched)},
			now:    start.Add(2 * time.Second),
			want:   []effects.Effect{effects.RequeueAt{At: start.Add(10 * time.Second)}},
		},
		{
			name:   "a NodeClaim gone once the launch settled",
			claims: []*v1.NodeClaim{claim(0, launched), claim(1, launched)},
			now:    start.Add(10 * time.Second),
			want:   released("1 of its 3 NodeClaims are gone", "gpu-0", "gpu-1"),
		},
		{
			name:   "not all launched within the timeout",
			claims: []*v1.NodeClaim{claim(0, launched), claim(1, launched), claim(2)},
			now:    start.Add(timeout),
			want:   released("2 of its 3 NodeClaims launched within 5m0s", "gpu-0", "gpu-1", "gpu-2"),
		},
		{
			name:   "released already: nothing more to do",
			claims: []*v1.NodeClaim{claim(0, deleting), claim(1, deleting), claim(2, deleting)},
			now:    start.Add(time.Minute),
		},
		{
			name:   "NodeClaims launched for no gang are left alone",
			claims: []*v1.NodeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "plain", DeletionTimestamp: ptr.To(metav1.NewTime(start))}}},
			now:    start,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ReleaseGroups(tc.claims, tc.running, tc.now, timeout)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodesRunningPods(t *testing.T) {
	pod := func(node string, mods ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: node}}
		for _, m := range mods {
			m(p)
		}
		return p
	}
	daemon := func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Controller: ptr.To(true)}}
	}
	done := func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }
	got := NodesRunningPods([]*corev1.Pod{pod("a"), pod("b", daemon), pod("c", done), pod("")})
	if diff := cmp.Diff(map[string]bool{"a": true}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
