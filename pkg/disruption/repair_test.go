package disruption

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// notReady makes node's Ready condition status since the given time.
func (c *cluster) notReady(node string, status corev1.ConditionStatus, since time.Time) {
	n := c.nodeNamed(node)
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(since)}}
}

// The reference's AWS policies' Ready rows, and an agent condition with a
// shorter toleration (the reference's suite uses one "BadNode" policy).
var repairPolicies = append(cloudprovider.KubeletRepairPolicies(30*time.Minute),
	cloudprovider.RepairPolicy{ConditionType: "AcceleratedHardwareReady", ConditionStatus: corev1.ConditionFalse, TolerationDuration: 10 * time.Minute})

func TestRepair(t *testing.T) {
	nodes := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	type unhealthy struct {
		node   string
		status corev1.ConditionStatus
		since  time.Duration // before now
	}
	cases := []struct {
		name        string
		nodes       int
		annotations map[string]string
		unhealthy   []unhealthy
		// repairing are nodes repair deleted that are still going.
		repairing []string
		want      []string
		verdicts  map[string]VerdictCode
		wakeIn    time.Duration
	}{
		{name: "healthy nodes stay", nodes: 3},
		{name: "Ready Unknown past its toleration is repaired", nodes: 5,
			unhealthy: []unhealthy{{"a", corev1.ConditionUnknown, 30 * time.Minute}}, want: []string{"a"}},
		{name: "Ready False past its toleration is repaired", nodes: 5,
			unhealthy: []unhealthy{{"a", corev1.ConditionFalse, time.Hour}}, want: []string{"a"}},
		// The reference's "should not delete node when health duration is
		// not reached": it requeues at the due time.
		{name: "within the toleration the node waits", nodes: 5,
			unhealthy: []unhealthy{{"a", corev1.ConditionUnknown, 29 * time.Minute}}, wakeIn: time.Minute},
		// The reference's "should consider round up when there is a low
		// number of nodes": 1 of 3 is 33%, ceil(20% of 3) = 1.
		{name: "the budget rounds up on a small pool", nodes: 3,
			unhealthy: []unhealthy{{"a", corev1.ConditionUnknown, time.Hour}}, want: []string{"a"}},
		// The reference's "should ignore unhealthy nodes if more then 20%
		// of the nodes are unhealthy in a nodepool": 3 of 10.
		{name: "more unhealthy than the breaker allows: none repaired", nodes: 10,
			unhealthy: []unhealthy{{"a", corev1.ConditionUnknown, time.Hour}, {"b", corev1.ConditionUnknown, time.Hour}, {"c", corev1.ConditionUnknown, time.Hour}},
			verdicts:  map[string]VerdictCode{"nc-a": VerdictTooManyUnhealthy, "nc-b": VerdictTooManyUnhealthy, "nc-c": VerdictTooManyUnhealthy}},
		// Unhealthy nodes count for the breaker before they are due, as
		// the reference counts them.
		{name: "not yet due nodes count for the breaker", nodes: 5,
			unhealthy: []unhealthy{{"a", corev1.ConditionUnknown, time.Hour}, {"b", corev1.ConditionUnknown, time.Minute}},
			verdicts:  map[string]VerdictCode{"nc-a": VerdictTooManyUnhealthy}, wakeIn: 29 * time.Minute},
		{name: "two of ten within 20%: both repaired at once", nodes: 10,
			unhealthy: []unhealthy{{"a", corev1.ConditionUnknown, time.Hour}, {"b", corev1.ConditionFalse, time.Hour}}, want: []string{"a", "b"}},
		// 3 of 5 within a breaker of 60%, a budget of one: the longest
		// unhealthy first, the others wait.
		{name: "the budget's share of a wider breaker", nodes: 5,
			annotations: map[string]string{v1.RepairBudgetAnnotationKey: "1", v1.RepairMaxUnhealthyAnnotationKey: "60%"},
			unhealthy:   []unhealthy{{"a", corev1.ConditionUnknown, time.Hour}, {"b", corev1.ConditionUnknown, 2 * time.Hour}, {"c", corev1.ConditionUnknown, time.Hour}},
			want:        []string{"b"}, verdicts: map[string]VerdictCode{"nc-a": VerdictBudget, "nc-c": VerdictBudget}},
		{name: "a repair still going spends the budget", nodes: 5,
			annotations: map[string]string{v1.RepairBudgetAnnotationKey: "1", v1.RepairMaxUnhealthyAnnotationKey: "60%"},
			unhealthy:   []unhealthy{{"a", corev1.ConditionUnknown, time.Hour}, {"b", corev1.ConditionUnknown, time.Hour}},
			repairing:   []string{"b"}, verdicts: map[string]VerdictCode{"nc-a": VerdictBudget}},
		{name: "a budget of 0 repairs nothing", nodes: 5, annotations: map[string]string{v1.RepairBudgetAnnotationKey: "0", v1.RepairMaxUnhealthyAnnotationKey: "20%"},
			unhealthy: []unhealthy{{"a", corev1.ConditionUnknown, time.Hour}}, verdicts: map[string]VerdictCode{"nc-a": VerdictBudget}},
		{name: "an invalid budget repairs nothing", nodes: 5, annotations: map[string]string{v1.RepairBudgetAnnotationKey: "lots"},
			unhealthy: []unhealthy{{"a", corev1.ConditionUnknown, time.Hour}}, verdicts: map[string]VerdictCode{"nc-a": VerdictBlocked}},
		{name: "a status no policy names is healthy", nodes: 5,
			unhealthy: []unhealthy{{"a", corev1.ConditionTrue, 2 * time.Hour}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := t0.Add(3 * time.Hour)
			c := newCluster(nodes[:tc.nodes]...)
			c.pool().Annotations = tc.annotations
			for _, u := range tc.unhealthy {
				c.notReady(u.node, u.status, now.Add(-u.since))
			}
			for _, n := range tc.repairing {
				nc := c.claim(n)
				nc.DeletionTimestamp = &metav1.Time{Time: now}
				nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: string(v1.DisruptionReasonUnhealthy)})
			}
			c.snapshot()
			r := Repair{Policies: repairPolicies}
			out := r.Compute(newEnv(c.in, Candidates(c.in, now), AllowedByPool(c.in, r.Reason(), now), now, r))
			if diff := cmp.Diff(tc.want, names(out.Command.Candidates), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("repaired (-want +got):\n%s", diff)
			}
			got := map[string]VerdictCode{}
			for _, v := range out.Verdicts {
				got[v.NodeClaim] = v.Code
				if v.Event != EventNodeRepairBlocked {
					t.Errorf("verdict on %s reported as %s, want %s", v.NodeClaim, v.Event, EventNodeRepairBlocked)
				}
			}
			if diff := cmp.Diff(tc.verdicts, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			var wake time.Duration
			if !out.WakeAt.IsZero() {
				wake = out.WakeAt.Sub(now)
			}
			if wake != tc.wakeIn {
				t.Errorf("wakes in %s, want %s", wake, tc.wakeIn)
			}
		})
	}
}

// The policy that comes due first wins, as the reference's
// findUnhealthyConditions picks it.
func TestUnhealthOfTakesTheFirstDue(t *testing.T) {
	node := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(t0)},
		{Type: "AcceleratedHardwareReady", Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(t0.Add(5 * time.Minute))},
	}}}
	got, ok := UnhealthOf(node, repairPolicies)
	want := Unhealth{Condition: "AcceleratedHardwareReady", Status: corev1.ConditionFalse, Since: t0.Add(5 * time.Minute), Due: t0.Add(15 * time.Minute)}
	if diff := cmp.Diff(want, got); !ok || diff != "" {
		t.Errorf("UnhealthOf = %v (-want +got):\n%s", ok, diff)
	}
}

// A repaired node is drained at once (the drain's deadline is the
// deletion) and counted by its condition; its replacement is launched
// first for its pods.
func TestRepairPreSpinsAndDrainsAtOnce(t *testing.T) {
	now := t0.Add(time.Hour)
	c := newCluster("a", "b")
	c.capacity("a", "4")
	c.capacity("b", "4")
	c.pod("web-a", "a", requests("3"))
	c.pod("web-b", "b", requests("3"))
	c.notReady("a", corev1.ConditionUnknown, t0)
	c.in.NodePools[0].Annotations = map[string]string{v1.RepairBudgetAnnotationKey: "50%"}
	c.snapshot(m5...)
	r := Repair{Policies: repairPolicies}
	out := r.Compute(newEnv(c.in, Candidates(c.in, now), nil, now, r))
	if diff := cmp.Diff([]string{"a"}, names(out.Command.Candidates)); diff != "" {
		t.Fatalf("repaired (-want +got):\n%s", diff)
	}
	if len(out.Command.Replacements) != 1 {
		t.Errorf("%d replacements, want 1 for web-a", len(out.Command.Replacements))
	}
	want := []effects.Effect{
		effects.MergeMetadata{Object: effects.NodeClaimRef("nc-a"), Annotations: map[string]string{v1.NodeClaimTerminationTimestampAnnotationKey: now.Format(time.RFC3339)}},
		effects.Metric{Name: MetricRepaired, Labels: []string{"default", "Ready"}, Value: 1},
	}
	if diff := cmp.Diff(want, out.Command.Deleting); diff != "" {
		t.Errorf("deleting effects (-want +got):\n%s", diff)
	}
}

// do-not-disrupt and PDBs hold voluntary methods, not a broken node.
func TestRepairIgnoresBlockers(t *testing.T) {
	now := t0.Add(time.Hour)
	c := newCluster("a", "b", "c", "d", "e")
	c.pod("web-a", "a", doNotDisrupt)
	c.pdb("web", 0)
	c.notReady("a", corev1.ConditionUnknown, t0)
	c.snapshot()
	r := Repair{Policies: repairPolicies}
	out := r.Compute(newEnv(c.in, Candidates(c.in, now), nil, now, r))
	if diff := cmp.Diff([]string{"a"}, names(out.Command.Candidates)); diff != "" {
		t.Errorf("repaired (-want +got):\n%s", diff)
	}
}

func TestRepairLimitsOf(t *testing.T) {
	cases := []struct {
		annotations map[string]string
		want        RepairLimits
		bad         string
	}{
		{want: RepairLimits{Budget: "20%", MaxUnhealthy: "20%"}},
		{annotations: map[string]string{v1.RepairBudgetAnnotationKey: "2"}, want: RepairLimits{Budget: "2", MaxUnhealthy: "2"}},
		{annotations: map[string]string{v1.RepairBudgetAnnotationKey: "1", v1.RepairMaxUnhealthyAnnotationKey: "60%"}, want: RepairLimits{Budget: "1", MaxUnhealthy: "60%"}},
		{annotations: map[string]string{v1.RepairBudgetAnnotationKey: "20"}, want: RepairLimits{Budget: "20", MaxUnhealthy: "20"}},
		{annotations: map[string]string{v1.RepairBudgetAnnotationKey: "-1"}, bad: v1.RepairBudgetAnnotationKey},
		{annotations: map[string]string{v1.RepairBudgetAnnotationKey: "120%"}, bad: v1.RepairBudgetAnnotationKey},
		{annotations: map[string]string{v1.RepairMaxUnhealthyAnnotationKey: "half"}, bad: v1.RepairMaxUnhealthyAnnotationKey},
	}
	for _, tc := range cases {
		np := newCluster().pool()
		np.Annotations = tc.annotations
		got, err := RepairLimitsOf(np)
		var bad *AnnotationError
		switch {
		case tc.bad != "" && (!errors.As(err, &bad) || bad.Key != tc.bad):
			t.Errorf("%v: error %v, want one on %s", tc.annotations, err, tc.bad)
		case tc.bad == "" && err != nil:
			t.Errorf("%v: %v", tc.annotations, err)
		case tc.bad == "":
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%v (-want +got):\n%s", tc.annotations, diff)
			}
		}
	}
}

func TestWithRepair(t *testing.T) {
	g := DefaultGates()
	if got := WithRepair(Methods(g), g, repairPolicies); len(got) != len(Methods(g)) {
		t.Errorf("with the NodeRepair gate off, %d methods, want %d", len(got), len(Methods(g)))
	}
	g.NodeRepair = true
	if got := WithRepair(Methods(g), g, nil); len(got) != len(Methods(g)) {
		t.Errorf("with no policies, %d methods, want %d", len(got), len(Methods(g)))
	}
	got := WithRepair(Methods(g), g, repairPolicies)
	if got[0].Name() != "Repair" {
		t.Errorf("first method %s, want Repair", got[0].Name())
	}
	if diff := cmp.Diff(BudgetReasons(Methods(g)), BudgetReasons(got)); diff != "" {
		t.Errorf("repair adds a budget reason (-want +got):\n%s", diff)
	}
}

// A static NodePool's repaired node is replaced first by a replica from
// its template, while the pool has room, as static drift replaces one
// (docs/static.md); the solver never solves for static pools.
func TestRepairStaticNodePool(t *testing.T) {
	cases := []struct {
		name         string
		replicas     int64
		nodesLimit   string
		unhealthy    []string
		want         []string
		replacements []string // each replacement's NodePool
	}{
		{name: "a busy static node is replaced from the template", replicas: 5, unhealthy: []string{"a"},
			want: []string{"a"}, replacements: []string{"default"}},
		{name: "two static nodes, two replicas", replicas: 5, unhealthy: []string{"a", "b"},
			want: []string{"a", "b"}, replacements: []string{"default", "default"}},
		{name: "limits.nodes leaves room for one of two", replicas: 5, nodesLimit: "6", unhealthy: []string{"a", "b"},
			want: []string{"a", "b"}, replacements: []string{"default"}},
		{name: "no room: repaired, replaced by scale-up later", replicas: 5, nodesLimit: "5", unhealthy: []string{"a"},
			want: []string{"a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := t0.Add(3 * time.Hour)
			c := newCluster("a", "b", "c", "d", "e")
			for _, n := range []string{"a", "b", "c", "d", "e"} {
				c.capacity(n, "4")
				c.pod("web-"+n, n, requests("3"))
			}
			c.pool().Spec.Replicas = ptr.To(tc.replicas)
			c.pool().Annotations = map[string]string{v1.RepairBudgetAnnotationKey: "50%", v1.RepairMaxUnhealthyAnnotationKey: "50%"}
			if tc.nodesLimit != "" {
				c.pool().Spec.Limits = v1.Limits{"nodes": resource.MustParse(tc.nodesLimit)}
			}
			for _, n := range tc.unhealthy {
				c.notReady(n, corev1.ConditionUnknown, t0)
			}
			c.snapshot(m5...)
			r := Repair{Policies: repairPolicies}
			out := r.Compute(newEnv(c.in, Candidates(c.in, now), nil, now, r))
			if diff := cmp.Diff(tc.want, names(out.Command.Candidates), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("repaired (-want +got):\n%s", diff)
			}
			var got []string
			for _, rep := range out.Command.Replacements {
				got = append(got, rep.NodePool)
				if len(rep.Pods) > 0 {
					t.Errorf("replacement %+v: want the template's claim, no pods", rep)
				}
			}
			if diff := cmp.Diff(tc.replacements, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("replacements (-want +got):\n%s", diff)
			}
		})
	}
}
