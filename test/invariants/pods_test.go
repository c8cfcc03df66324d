package invariants

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// A do-not-disrupt pod terminating, or gone, on a node its NodeClaim's
// voluntary disruption drains is a violation; on a node expiring or
// interrupted, or not being disrupted, it is not.
func TestDoNotDisrupt(t *testing.T) {
	t.Parallel()
	dnd := annotated(v1.DoNotDisruptAnnotationKey, "true")
	for _, tc := range []struct {
		name string
		// claim is n1's NodeClaim.
		claim *v1.NodeClaim
		// pod is x's on n1; it starts terminating unless at once, then
		// goes if deleted.
		pod             func(*corev1.Pod)
		atOnce, deleted bool
		want            int
		objects         []string
	}{
		{name: "evicted from a drifted node", claim: claim("c1", onNode("n1"), disrupted(v1.DisruptionReasonDrifted)),
			pod: dnd, deleted: true, want: 1,
			objects: []string{"ns/x (on n1", "started terminating", "c1 (node n1, disrupted for Drifted"}},
		{name: "deleted at once from an empty node", claim: claim("c1", onNode("n1"), disrupted(v1.DisruptionReasonEmpty), deleting),
			pod: dnd, atOnce: true, deleted: true, want: 1, objects: []string{"was deleted", "c1 (node n1, disrupted for Empty (test), deleting"}},
		{name: "consolidated", claim: claim("c1", onNode("n1"), disrupted(v1.DisruptionReasonUnderutilized)), pod: dnd, want: 1},
		{name: "expired", claim: claim("c1", onNode("n1"), disrupted(v1.DisruptionReasonExpired), deleting), pod: dnd, deleted: true},
		{name: "interrupted", claim: claim("c1", onNode("n1"), disrupted(v1.DisruptionReasonInterrupted), deleting), pod: dnd, deleted: true},
		{name: "not disrupted", claim: claim("c1", onNode("n1")), pod: dnd, deleted: true},
		{name: "another node disrupted", claim: claim("c1", onNode("n2"), disrupted(v1.DisruptionReasonDrifted)), pod: dnd, deleted: true},
		{name: "without the annotation", claim: claim("c1", onNode("n1"), disrupted(v1.DisruptionReasonDrifted)),
			pod: func(*corev1.Pod) {}, deleted: true},
		{name: "annotated false", claim: claim("c1", onNode("n1"), disrupted(v1.DisruptionReasonDrifted)),
			pod: annotated(v1.DoNotDisruptAnnotationKey, "false"), deleted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := New(Options{})
			c.ObserveClaim(watch.Added, tc.claim, t0)
			c.ObservePod(watch.Added, pod("x", tc.pod, on("n1")), t0)
			if !tc.atOnce {
				c.ObservePod(watch.Modified, pod("x", tc.pod, on("n1"), terminating), at(1))
			}
			if tc.deleted {
				c.ObservePod(watch.Deleted, pod("x", tc.pod, on("n1"), terminating), at(2))
			}
			expectViolations(t, c, tc.want, tc.objects...)
		})
	}
}

// A pod Pending, while not being deleted, longer than the bound is a
// violation, whether it then binds, is deleted, or is still Pending at
// the end; within the bound it is not.
func TestPendingBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// then is the pod's change after 0 s Pending, and when; none leaves
		// it Pending until Finish at 30 s.
		then    *corev1.Pod
		typ     watch.EventType
		at      float64
		want    int
		longest time.Duration
	}{
		{name: "bound within the bound", then: pod("x"), typ: watch.Modified, at: 5, longest: 5 * time.Second},
		{name: "bound after it", then: pod("x"), typ: watch.Modified, at: 12, want: 1, longest: 12 * time.Second},
		{name: "deleted within the bound", then: pod("x", unbound), typ: watch.Deleted, at: 5, longest: 5 * time.Second},
		{name: "deleted after it", then: pod("x", unbound, terminating), typ: watch.Modified, at: 20, want: 1, longest: 20 * time.Second},
		{name: "still Pending at the end", want: 1, longest: 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := New(Options{PendingBound: 10 * time.Second})
			c.ObservePod(watch.Added, pod("x", unbound), t0)
			c.ObservePod(watch.Modified, pod("x", unbound), at(1)) // still Pending: counts from its first sight
			if tc.then != nil {
				c.ObservePod(tc.typ, tc.then, at(tc.at))
			}
			c.Finish(at(30))
			expectViolations(t, c, tc.want, "ns/x")
			if d, name := c.LongestPending(); d != tc.longest || name != "ns/x" {
				t.Errorf("longest pending %s %s, want %s ns/x", d, name, tc.longest)
			}
		})
	}
	t.Run("a pod first seen bound", func(t *testing.T) {
		t.Parallel()
		c := New(Options{PendingBound: time.Second})
		c.ObservePod(watch.Added, pod("x"), t0)
		c.Finish(at(30))
		expectViolations(t, c, 0)
		if d, _ := c.LongestPending(); d != 0 {
			t.Errorf("longest pending %s, want 0", d)
		}
	})
}

// A PDB reporting fewer healthy pods than it requires is a violation once
// it reported it held, each breach once; not before, not while its status
// is about an older spec, and not when the scenario ignores it.
func TestPDBStatus(t *testing.T) {
	t.Parallel()
	status := func(generation, observed int64, healthy, desired int32) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: generation},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: app}},
			Status:     policyv1.PodDisruptionBudgetStatus{ObservedGeneration: observed, CurrentHealthy: healthy, DesiredHealthy: desired, ExpectedPods: 2},
		}
	}
	for _, tc := range []struct {
		name   string
		ignore bool
		steps  []*policyv1.PodDisruptionBudget
		want   int
	}{
		{name: "held", steps: []*policyv1.PodDisruptionBudget{status(1, 1, 2, 1), status(1, 1, 1, 1), status(1, 1, 2, 1)}},
		{name: "broken", steps: []*policyv1.PodDisruptionBudget{status(1, 1, 2, 2), status(1, 1, 1, 2)}, want: 1},
		{name: "broken twice", steps: []*policyv1.PodDisruptionBudget{
			status(1, 1, 2, 2), status(1, 1, 1, 2), status(1, 1, 0, 2), status(1, 1, 2, 2), status(1, 1, 1, 2),
		}, want: 2},
		{name: "rolling out", steps: []*policyv1.PodDisruptionBudget{status(1, 0, 0, 0), status(1, 1, 0, 2), status(1, 1, 1, 2)}},
		{name: "a new spec not yet observed", steps: []*policyv1.PodDisruptionBudget{status(1, 1, 2, 2), status(2, 1, 1, 2)}},
		{name: "ignored", ignore: true, steps: []*policyv1.PodDisruptionBudget{status(1, 1, 2, 2), status(1, 1, 1, 2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := New(Options{IgnorePDBStatus: tc.ignore})
			c.ObservePod(watch.Added, pod("a"), t0)
			c.ObservePod(watch.Added, pod("b", notReady), t0)
			for i, p := range tc.steps {
				c.ObservePDB(watch.Modified, p, at(float64(i)))
			}
			objects := []string{}
			if tc.want > 0 {
				objects = []string{"pdb ns/web reports", "ns/a (on n, Ready)", "ns/b (on n, not Ready)"}
			}
			expectViolations(t, c, tc.want, objects...)
		})
	}
}
