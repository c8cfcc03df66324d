package drain

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
)

func deletedClaim(mods ...func(*v1.NodeClaim)) *v1.NodeClaim {
	deleted := metav1.NewTime(start)
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nc", DeletionTimestamp: &deleted, Finalizers: []string{v1.TerminationFinalizer}}}
	nc.Status.ProviderID = "sim://zone/i-1"
	for _, m := range mods {
		m(nc)
	}
	return nc
}

func drainingNode(mods ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node", Finalizers: []string{v1.TerminationFinalizer}}}
	for _, m := range mods {
		m(n)
	}
	return n
}

func nodeDeleting(n *corev1.Node) {
	at := metav1.NewTime(start)
	n.DeletionTimestamp = &at
	n.Spec.Taints = []corev1.Taint{v1.DisruptedNoScheduleTaint()}
}

func interruptedAt(deadline time.Time) func(*v1.NodeClaim) {
	return func(nc *v1.NodeClaim) {
		nc.Annotations = map[string]string{v1.NodeClaimTerminationTimestampAnnotationKey: deadline.Format(time.RFC3339)}
		nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: string(v1.DisruptionReasonInterrupted)}}
	}
}

func TestDrain(t *testing.T) {
	disrupted := effects.PatchNode{Name: "node", AddTaints: []corev1.Taint{v1.DisruptedNoScheduleTaint()}}
	for _, tc := range []struct {
		name string
		in   Termination
		want Step
	}{
		{"no node: the instance may go", Termination{NodeClaim: deletedClaim(), Now: start}, Step{Drained: true}},
		{"first step: taint, delete the node, evict", Termination{NodeClaim: deletedClaim(), Node: drainingNode(), Pods: []*corev1.Pod{pod("web", inNamespace("ns"))}, Now: start},
			Step{Effects: []effects.Effect{disrupted, effects.DeleteNode{Name: "node"}, effects.EvictPod{Namespace: "ns", Name: "web"}},
				Poll: time.Second, Progress: Progress{Evicting: []string{"ns/web"}}}},
		{"a pod evicted last step still here: its PDB refused, back off", Termination{NodeClaim: deletedClaim(), Node: drainingNode(nodeDeleting),
			Pods: []*corev1.Pod{pod("web", inNamespace("ns"))}, Progress: Progress{Evicting: []string{"ns/web"}, Refusals: 1}, Now: start},
			Step{Effects: []effects.Effect{effects.EvictPod{Namespace: "ns", Name: "web"}},
				Poll: 4 * time.Second, Progress: Progress{Evicting: []string{"ns/web"}, Refusals: 2}}},
		{"backoff is capped", Termination{NodeClaim: deletedClaim(), Node: drainingNode(nodeDeleting),
			Pods: []*corev1.Pod{pod("web", inNamespace("ns"))}, Progress: Progress{Evicting: []string{"ns/web"}, Refusals: 7}, Now: start},
			Step{Effects: []effects.Effect{effects.EvictPod{Namespace: "ns", Name: "web"}},
				Poll: 15 * time.Second, Progress: Progress{Evicting: []string{"ns/web"}, Refusals: 8}}},
		{"terminationGracePeriod: delete early, requeue when the next deletion is due", Termination{
			NodeClaim: deletedClaim(func(nc *v1.NodeClaim) { nc.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour} }),
			Node:      drainingNode(nodeDeleting),
			Pods:      []*corev1.Pod{pod("batch", inNamespace("ns"), doNotDisrupt, grace(300)), pod("slow", inNamespace("ns"), doNotDisrupt, grace(600))},
			Now:       start.Add(55 * time.Minute)},
			Step{Effects: []effects.Effect{
				effects.DeletePod{Namespace: "ns", Name: "batch", GracePeriodSeconds: ptr.To[int64](300)},
				GracePeriodReached(pod("batch", inNamespace("ns"))),
				effects.DeletePod{Namespace: "ns", Name: "slow", GracePeriodSeconds: ptr.To[int64](300)},
				GracePeriodReached(pod("slow", inNamespace("ns"))),
			}, Poll: time.Second, Progress: Progress{Evicting: []string{}}}},
		{"do-not-disrupt before its deletion is due: wait for it", Termination{
			NodeClaim: deletedClaim(func(nc *v1.NodeClaim) { nc.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour} }),
			Node:      drainingNode(nodeDeleting),
			Pods:      []*corev1.Pod{pod("batch", inNamespace("ns"), doNotDisrupt, grace(300))},
			Now:       start.Add(50 * time.Minute)},
			Step{Effects: []effects.Effect{effects.RequeueAt{At: start.Add(55 * time.Minute)}}, Poll: time.Second, Progress: Progress{Evicting: []string{}}}},
		{"drained, a volume still attached: wait", Termination{NodeClaim: deletedClaim(), Node: drainingNode(nodeDeleting), Attachments: []string{"va-1"},
			Progress: Progress{Evicting: []string{"ns/web"}, Refusals: 2}, Now: start},
			Step{Effects: []effects.Effect{WaitingOnVolumes(deletedClaim(), "va-1", "node")}, Poll: time.Second}},
		{"drained and detached", Termination{NodeClaim: deletedClaim(), Node: drainingNode(nodeDeleting), Pods: []*corev1.Pod{pod("logs", daemon, func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })}, Now: start},
			Step{Drained: true}},
		{"interrupted: the slack left is observed once", Termination{NodeClaim: deletedClaim(interruptedAt(start.Add(2 * time.Minute))), Node: drainingNode(nodeDeleting),
			Now: start.Add(30 * time.Second)},
			Step{Effects: []effects.Effect{effects.Observe{Name: SlackMetric, Value: 90}}, Drained: true, Progress: Progress{SlackObserved: true}}},
		{"interrupted, slack already observed", Termination{NodeClaim: deletedClaim(interruptedAt(start.Add(2 * time.Minute))), Node: drainingNode(nodeDeleting),
			Progress: Progress{SlackObserved: true}, Now: start.Add(40 * time.Second)},
			Step{Drained: true, Progress: Progress{SlackObserved: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The conditions each step sets are TestDrainConditions'.
			if diff := cmp.Diff(tc.want, withoutConditions(Drain(tc.in))); diff != "" {
				t.Errorf("Drain (-want +got):\n%s", diff)
			}
		})
	}
}

func withoutConditions(s Step) Step {
	s.Effects = slices.DeleteFunc(s.Effects, func(e effects.Effect) bool {
		_, ok := e.(effects.SetCondition)
		return ok
	})
	if len(s.Effects) == 0 {
		s.Effects = nil
	}
	return s
}

func TestFinish(t *testing.T) {
	nc := deletedClaim()
	for _, tc := range []struct {
		name string
		node *corev1.Node
		gone bool
		want Step
	}{
		{"the instance runs: terminate it, look again", drainingNode(nodeDeleting), false,
			Step{Effects: []effects.Effect{effects.Terminate{NodeClaim: nc}}, Poll: time.Second}},
		{"gone: event, then the finalizers", drainingNode(nodeDeleting), true,
			Step{Effects: []effects.Effect{Terminated(nc),
				effects.RemoveFinalizer{Object: effects.NodeClaimRef("nc"), Finalizer: v1.TerminationFinalizer},
				effects.RemoveFinalizer{Object: effects.NodeRef("node"), Finalizer: v1.TerminationFinalizer},
			}, Done: true}},
		{"gone, no node", nil, true,
			Step{Effects: []effects.Effect{Terminated(nc), effects.RemoveFinalizer{Object: effects.NodeClaimRef("nc"), Finalizer: v1.TerminationFinalizer}}, Done: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Finish(nc, tc.node, tc.gone)); diff != "" {
				t.Errorf("Finish (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeDeleted(t *testing.T) {
	live := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "live"}}
	for _, tc := range []struct {
		name   string
		node   *corev1.Node
		claims []*v1.NodeClaim
		want   []effects.Effect
	}{
		{"not nodeDeleting", drainingNode(), []*v1.NodeClaim{live}, nil},
		{"without the finalizer", drainingNode(nodeDeleting, func(n *corev1.Node) { n.Finalizers = nil }), []*v1.NodeClaim{live}, nil},
		{"its NodeClaims are deleted", drainingNode(nodeDeleting), []*v1.NodeClaim{live, deletedClaim()}, []effects.Effect{effects.DeleteNodeClaim{Name: "live"}}},
		{"no NodeClaim: released", drainingNode(nodeDeleting), nil,
			[]effects.Effect{effects.RemoveFinalizer{Object: effects.NodeRef("node"), Finalizer: v1.TerminationFinalizer}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NodeDeleted(tc.node, tc.claims)); diff != "" {
				t.Errorf("NodeDeleted (-want +got):\n%s", diff)
			}
		})
	}
}
