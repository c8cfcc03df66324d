package explain_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/test"
)

// launched makes node an on-demand m5.<size> in zone-a, priced by the
// world's instance types.
func (w *world) launched(node string, it *cloudprovider.InstanceType) {
	labels := map[string]string{v1.LabelInstanceType: it.Name, v1.LabelZone: "zone-a", v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand}
	nc, n := w.claim(node), w.nodeNamed(node)
	for k, v := range labels {
		nc.Labels[k], n.Labels[k] = v, v
	}
	n.Status.Allocatable, n.Status.Capacity = it.Allocatable(), it.Capacity.DeepCopy()
}

func cpu(q string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse(q)
	}
}

// explain node shows the score a Balanced NodePool gave the node's move,
// taken or skipped, in its answer and its text.
func TestExplainNodeConsolidationScore(t *testing.T) {
	m5 := test.InstanceTypeSeries("m5", 8)
	cases := []struct {
		name   string
		setup  func(w *world)
		status string
		want   *disruption.MoveScore
		text   string
	}{
		{name: "taken: a and b go together, their pods onto an m5.2", setup: func(w *world) {
			w.launched("a", m5[3])
			w.launched("b", m5[3])
			w.pod("a1", "a", cpu("0.5"))
			w.pod("b1", "b", cpu("0.5"))
		}, status: explain.DisruptionNext,
			want: &disruption.MoveScore{Method: "MultiNodeConsolidation", NodePool: "web", NodeClaims: []string{"nc-a", "nc-b"}, Savings: 0.42, DisruptionCost: 4,
				SavingsFraction: 0.75, DisruptionFraction: 1, Score: 0.75, Threshold: 0.5, Taken: true},
			text: "consolidation score (MultiNodeConsolidation, ConsolidationApproved): score 0.75 >= threshold 0.50 (k: 2, savings 75.0%, disruption 100.0%)"},
		{name: "skipped: four pods on the pool's cheapest node", setup: func(w *world) {
			w.launched("a", m5[0])
			w.launched("b", m5[7])
			for _, p := range []string{"a1", "a2", "a3", "a4"} {
				w.pod(p, "a", cpu("0.1"))
			}
			// b is full: no node takes both nodes' pods.
			w.pod("b1", "b", cpu("7.8"))
		}, status: explain.DisruptionHeld,
			want: &disruption.MoveScore{Method: "SingleNodeConsolidation", NodePool: "web", NodeClaims: []string{"nc-a"}, Savings: 0.07, DisruptionCost: 5,
				SavingsFraction: 0.1111, DisruptionFraction: 0.7143, Score: 0.1556, Threshold: 0.5},
			text: "consolidation score (SingleNodeConsolidation, ConsolidationRejected): score 0.16 < threshold 0.50 (k: 2, savings 11.1%, disruption 71.4%)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld("a", "b")
			w.its = m5
			w.pool().Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyBalanced
			tc.setup(w)
			got := explain.ForNode(explain.NodeInput{NodeClaim: w.claim("a").DeepCopy(), Disruption: w.input(), Now: now})
			if got.DisruptionStatus != tc.status {
				t.Errorf("status %s (%s), want %s", got.DisruptionStatus, got.Disruption, tc.status)
			}
			if diff := cmp.Diff(tc.want, got.ConsolidationScore, cmpopts.EquateApprox(0, 0.0001)); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
			var text strings.Builder
			if err := explain.WriteNode(&text, got); err != nil || !strings.Contains(text.String(), tc.text) {
				t.Errorf("text %q (%v), want it to say %q", text.String(), err, tc.text)
			}
		})
	}
}
