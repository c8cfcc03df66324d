package explain_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/explain"
)

// unreachable makes node's Ready condition Unknown since the given time.
func (w *world) unreachable(node string, since time.Time) {
	w.nodeNamed(node).Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, LastTransitionTime: metav1.NewTime(since)}}
}

// explain node says whether an unhealthy node is repaired, and why not:
// the gate, its toleration, its NodePool's breaker or repair budget
// (docs/disruption.md, "Node repair").
func TestExplainNodeRepair(t *testing.T) {
	policies := cloudprovider.KubeletRepairPolicies(30 * time.Minute)
	cases := []struct {
		name        string
		gate        bool
		unreachable map[string]time.Duration // before now
		annotations map[string]string
		want        string // in the repair line of node a; "" for none
	}{
		{name: "healthy", gate: true},
		{name: "the gate off", unreachable: map[string]time.Duration{"a": time.Hour}, want: "not repaired: the NodeRepair feature gate is off"},
		{name: "within its toleration", gate: true, unreachable: map[string]time.Duration{"a": 10 * time.Minute},
			want: "unhealthy: Ready Unknown since 2026-03-10T11:50:00Z; tolerated until 2026-03-10T12:20:00Z"},
		{name: "due", gate: true, unreachable: map[string]time.Duration{"a": time.Hour}, want: "due: the next planning round repairs it"},
		{name: "the breaker", gate: true, unreachable: map[string]time.Duration{"a": time.Hour, "b": time.Hour},
			want: "not repaired: 2 of nodepool web's 5 nodes are unhealthy, more than its repair-max-unhealthy 20% (1): repairing none"},
		{name: "the budget", gate: true, unreachable: map[string]time.Duration{"a": time.Hour, "b": time.Hour},
			annotations: map[string]string{v1.RepairBudgetAnnotationKey: "0", v1.RepairMaxUnhealthyAnnotationKey: "100%"},
			want:        "not repaired: Ready Unknown since 2026-03-10T11:00:00Z: repair budget 0 (0) of nodepool web is in use by 0 repair(s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld("a", "b", "c", "d", "e")
			w.pool().Annotations = tc.annotations
			for n, d := range tc.unreachable {
				w.unreachable(n, now.Add(-d))
			}
			got := explain.ForNode(explain.NodeInput{NodeClaim: w.claim("a"), Disruption: w.input(), Drift: true, NodeRepair: tc.gate, RepairPolicies: policies, Now: now})
			if tc.want == "" {
				if got.Repair != "" {
					t.Errorf("repair %q, want none", got.Repair)
				}
				return
			}
			if !strings.Contains(got.Repair, tc.want) {
				t.Errorf("repair %q, want it to say %q", got.Repair, tc.want)
			}
			var text strings.Builder
			if err := explain.WriteNode(&text, got); err != nil || !strings.Contains(text.String(), "  repair: "+got.Repair) {
				t.Errorf("text %q (%v) has no repair line", text.String(), err)
			}
		})
	}
}

// A node Repair will replace is not reported blocked by what holds only
// voluntary methods: do-not-disrupt does not hold a broken node
// (docs/disruption.md, "Node repair").
func TestExplainNodeRepairIgnoresDoNotDisrupt(t *testing.T) {
	w := newWorld("a", "b", "c", "d", "e")
	w.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
	w.unreachable("a", now.Add(-time.Hour))
	got := explain.ForNode(explain.NodeInput{NodeClaim: w.claim("a"), Disruption: w.input(), Drift: true, NodeRepair: true,
		RepairPolicies: cloudprovider.KubeletRepairPolicies(30 * time.Minute), Now: now})
	if got.DisruptionStatus == explain.DisruptionBlocked {
		t.Errorf("disruption %s: %q, want it not blocked", got.DisruptionStatus, got.Disruption)
	}
	if !strings.Contains(got.Repair, "due: the next planning round repairs it") {
		t.Errorf("repair %q, want it due", got.Repair)
	}
}
