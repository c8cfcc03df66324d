package disruption

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestEvictionAndRescheduleCost(t *testing.T) {
	// The reference's EvictionCost (pkg/utils/disruption/disruption.go);
	// a node's RescheduleCost is 1 plus its pods', negatives raised to 0
	// as the reference's scoring path does
	// (designs/balanced-consolidation.md, "Per-Pod Disruption Cost").
	cases := []struct {
		name         string
		deletionCost string
		priority     *int32
		eviction     float64
		reschedule   float64
	}{
		{name: "neither set", eviction: 1, reschedule: 2},
		{name: "deletion cost 2^27 adds one", deletionCost: "134217728", eviction: 2, reschedule: 3},
		{name: "the largest deletion cost clamps to 10", deletionCost: "2147483647", eviction: 10, reschedule: 11},
		{name: "the smallest deletion cost clamps to -10, scored 0", deletionCost: "-2147483647", eviction: -10, reschedule: 1},
		{name: "priority 2^25 adds one", priority: ptr.To[int32](33554432), eviction: 2, reschedule: 3},
		{name: "system-node-critical clamps to 10", priority: ptr.To[int32](2000001000), eviction: 10, reschedule: 11},
		{name: "both add up", deletionCost: "134217728", priority: ptr.To[int32](33554432), eviction: 3, reschedule: 4},
		{name: "an unparsable deletion cost is ignored", deletionCost: "lots", eviction: 1, reschedule: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := test.Pod("default", func(p *corev1.Pod) {
				if tc.deletionCost != "" {
					p.Annotations = map[string]string{corev1.PodDeletionCost: tc.deletionCost}
				}
				p.Spec.Priority = tc.priority
			})
			if got := EvictionCost(p); math.Abs(got-tc.eviction) > 1e-9 {
				t.Errorf("eviction cost %v, want %v", got, tc.eviction)
			}
			if got := RescheduleCost(Candidate{Pods: []*corev1.Pod{p}}); math.Abs(got-tc.reschedule) > 1e-9 {
				t.Errorf("reschedule cost %v, want %v", got, tc.reschedule)
			}
		})
	}
}

func TestScore(t *testing.T) {
	// The worked examples of designs/balanced-consolidation.md
	// ("Examples"): ten m7i nodes, $58.08/day, disruption cost 80.
	pool := PoolTotals{Cost: 58.08, DisruptionCost: 80}
	cases := []struct {
		name       string
		savings    float64
		disruption float64
		totals     PoolTotals
		threshold  float64
		score      float64
		taken      bool
	}{
		{name: "oversized node", savings: 7.26, disruption: 3, totals: pool, threshold: 0.5, score: 3.33, taken: true},
		{name: "spare capacity delete", savings: 4.84, disruption: 4, totals: pool, threshold: 0.5, score: 1.67, taken: true},
		{name: "marginal move", savings: 2.42, disruption: 8, totals: pool, threshold: 0.5, score: 0.42},
		{name: "well-packed node saves nothing", savings: 0, disruption: 10, totals: pool, threshold: 0.5, score: 0},
		{name: "a net loss", savings: -1, disruption: 1, totals: pool, threshold: 0.5, score: 0},
		{name: "uniform pool replace sits on the boundary", savings: 2.42, disruption: 8, totals: PoolTotals{Cost: 48.40, DisruptionCost: 80}, threshold: 0.5, score: 0.5, taken: true},
		{name: "scale invariance", savings: 7.26, disruption: 3, totals: PoolTotals{Cost: 580.80, DisruptionCost: 800}, threshold: 0.5, score: 3.33, taken: true},
		// The design rounds its fractions first (0.083 / 0.037 = 2.24).
		{name: "heterogeneous disruption: cheap pods", savings: 4.84, disruption: 4, totals: PoolTotals{Cost: 58.08, DisruptionCost: 107}, threshold: 0.5, score: 2.23, taken: true},
		{name: "heterogeneous disruption: expensive pods", savings: 4.84, disruption: 31, totals: PoolTotals{Cost: 58.08, DisruptionCost: 107}, threshold: 0.5, score: 0.29},
		{name: "spot pool, 8 pods", savings: 1.45, disruption: 8, totals: PoolTotals{Cost: 14.50, DisruptionCost: 80}, threshold: 0.5, score: 1, taken: true},
		{name: "nothing to weigh against", savings: 1, disruption: 1, totals: PoolTotals{}, threshold: 0.5, score: 0},
		{name: "a lower threshold takes the marginal move", savings: 2.42, disruption: 8, totals: pool, threshold: 0.4, score: 0.42, taken: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Score(tc.savings, tc.disruption, tc.totals, tc.threshold)
			if math.Abs(got.Score-tc.score) > 0.005 || got.Taken != tc.taken {
				t.Errorf("score %.4f taken %v, want %.2f and %v", got.Score, got.Taken, tc.score, tc.taken)
			}
		})
	}
}

func TestConsolidationThresholdOf(t *testing.T) {
	cases := []struct {
		value string
		set   bool
		want  float64
		bad   bool
	}{
		{want: 0.5},
		{value: "0.25", set: true, want: 0.25},
		{value: "2", set: true, want: 2},
		{value: "0", set: true, bad: true},
		{value: "-0.5", set: true, bad: true},
		{value: "50%", set: true, bad: true},
		{value: "NaN", set: true, bad: true},
		{value: "Inf", set: true, bad: true},
		{value: "", set: true, bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.value, func(t *testing.T) {
			np := test.NodePool(func(np *v1.NodePool) {
				if tc.set {
					np.Annotations = map[string]string{v1.ConsolidationThresholdAnnotationKey: tc.value}
				}
			})
			got, err := ConsolidationThresholdOf(np)
			if (err != nil) != tc.bad || got != tc.want {
				t.Errorf("threshold %v (%v), want %v (bad %v)", got, err, tc.want, tc.bad)
			}
		})
	}
}

// balancedPool puts NodePool "default" under Balanced, on demand only so
// prices are plain, with the threshold annotation when set.
func balancedPool(threshold string) func(*cluster) {
	return func(c *cluster) {
		c.pool().Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyBalanced
		poolCapacityTypes(c, v1.CapacityTypeOnDemand)
		if threshold != "" {
			c.pool().Annotations = map[string]string{v1.ConsolidationThresholdAnnotationKey: threshold}
		}
	}
}

// spareNode: deleting a (one pod, fits b) saves 50% for 2/4 of the
// disruption.
func spareNode(c *cluster) {
	c.launched("a", m5n(4), v1.CapacityTypeOnDemand, "")
	c.launched("b", m5n(4), v1.CapacityTypeOnDemand, "")
	c.pod("a1", "a", requests("1"))
	c.pod("b1", "b", requests("1"))
}

// crowdedNode: a (m5.1, $0.07) runs four pods beside b (m5.8, $0.56, one
// pod): even deleting a saves 11.1% for 5/7 of the disruption. b is full.
func crowdedNode(c *cluster) {
	c.launched("a", m5n(1), v1.CapacityTypeOnDemand, "")
	c.launched("b", m5n(8), v1.CapacityTypeOnDemand, "")
	for _, p := range []string{"a1", "a2", "a3", "a4"} {
		c.pod(p, "a", requests("0.1"))
	}
	c.pod("b1", "b", requests("7"))
}

func TestBalancedConsolidation(t *testing.T) {
	od := v1.CapacityTypeOnDemand
	// a (m5.4, $0.28) runs five half-core pods that fit an m5.3 ($0.21);
	// b (m5.4) is full with one: the pool costs $0.56 and 1+5 + 1+1 = 8
	// to disrupt. Replacing a saves 12.5% for 75% of the disruption.
	marginal := func(c *cluster) {
		c.launched("a", m5n(4), od, "")
		c.launched("b", m5n(4), od, "")
		for _, p := range []string{"a1", "a2", "a3", "a4", "a5"} {
			c.pod(p, "a", requests("0.5"))
		}
		c.pod("b1", "b", requests("3.8"))
	}
	single := SingleNodeConsolidation{}
	cases := []struct {
		name      string
		threshold string
		setup     func(*cluster)
		method    Method
		want      []string
		scores    []MoveScore
		verdicts  []Verdict
	}{
		{name: "a replace that saves little is skipped", setup: marginal, method: single,
			scores: []MoveScore{{Method: single.Name(), NodePool: "default", NodeClaims: []string{"nc-a"}, Savings: 0.07, DisruptionCost: 6,
				SavingsFraction: 0.125, DisruptionFraction: 0.75, Score: 0.1667, Threshold: 0.5}},
			verdicts: []Verdict{notCheaper("b"), {NodeClaim: "nc-a", Node: "a", Method: single.Name(), Event: EventConsolidationRejected, Code: VerdictBelowThreshold,
				Message: "score 0.17 < threshold 0.50 (k: 2, savings 12.5%, disruption 75.0%)"}}},
		{name: "a lower threshold takes it", threshold: "0.15", setup: marginal, method: single, want: []string{"a"},
			scores: []MoveScore{{Method: single.Name(), NodePool: "default", NodeClaims: []string{"nc-a"}, Savings: 0.07, DisruptionCost: 6,
				SavingsFraction: 0.125, DisruptionFraction: 0.75, Score: 0.1667, Threshold: 0.15, Taken: true}},
			verdicts: []Verdict{notCheaper("b")}},
		{name: "a delete that saves much is taken", setup: spareNode, method: single, want: []string{"a"},
			scores: []MoveScore{{Method: single.Name(), NodePool: "default", NodeClaims: []string{"nc-a"}, Savings: 0.28, DisruptionCost: 2,
				SavingsFraction: 0.5, DisruptionFraction: 0.5, Score: 1, Threshold: 0.5, Taken: true}}},
		{name: "a node even whose delete falls short is not simulated", setup: crowdedNode, method: single,
			scores: []MoveScore{{Method: single.Name(), NodePool: "default", NodeClaims: []string{"nc-a"}, Savings: 0.07, DisruptionCost: 5,
				SavingsFraction: 0.1111, DisruptionFraction: 0.7143, Score: 0.1556, Threshold: 0.5}},
			verdicts: []Verdict{{NodeClaim: "nc-a", Node: "a", Method: single.Name(), Event: EventConsolidationRejected, Code: VerdictBelowThreshold,
				Message: "score 0.16 < threshold 0.50 (k: 2, savings 11.1%, disruption 71.4%)"}, notCheaper("b")}},
		{name: "an invalid threshold holds the pool's nodes", threshold: "high", setup: spareNode, method: single,
			verdicts: []Verdict{
				{NodeClaim: "nc-a", Node: "a", Method: single.Name(), Event: EventUnconsolidatable, Code: VerdictInvalidThreshold,
					Message: `annotation capstan.dev/consolidation-threshold: "high" is not a positive decimal number`},
				{NodeClaim: "nc-b", Node: "b", Method: single.Name(), Event: EventUnconsolidatable, Code: VerdictInvalidThreshold,
					Message: `annotation capstan.dev/consolidation-threshold: "high" is not a positive decimal number`},
			}},
		{name: "multi-node: a larger move the threshold rejects leaves the smaller one", threshold: "0.9", method: MultiNodeConsolidation{},
			setup: func(c *cluster) {
				// Three m5.4 with a one-core pod each: a and b fit c
				// (score 1); all three need an m5.4 ($0.28), saving 2/3
				// of the cost for all of the disruption (score 0.67).
				for _, n := range []string{"a", "b", "c"} {
					c.launched(n, m5n(4), od, "")
					c.pod(n+"1", n, requests("1"))
				}
			}, want: []string{"a", "b"},
			scores: []MoveScore{{Method: "MultiNodeConsolidation", NodePool: "default", NodeClaims: []string{"nc-a", "nc-b"}, Savings: 0.56, DisruptionCost: 4,
				SavingsFraction: 0.6667, DisruptionFraction: 0.6667, Score: 1, Threshold: 0.9, Taken: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			balancedPool(tc.threshold)(c)
			tc.setup(c)
			c.snapshot(m5...)
			d := Plan(c.in, []Method{tc.method}, t0.Add(time.Hour))
			if diff := cmp.Diff(tc.want, names(d.Command.Candidates), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("disrupted (-want +got):\n%s", diff)
			}
			approx := cmpopts.EquateApprox(0, 0.0001)
			if diff := cmp.Diff(tc.scores, d.Scores, approx, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
			var taken []MoveScore
			for _, s := range tc.scores {
				if s.Taken {
					taken = append(taken, s)
				}
			}
			if diff := cmp.Diff(taken, d.Command.Scores, approx, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("the command's scores (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.verdicts, d.Verdicts, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

// A move approved at planning is approved again when its command is
// validated: its fractions are over the whole pool then too, not over
// the command's own nodes.
func TestBalancedMoveStaysApprovedAtValidation(t *testing.T) {
	od := v1.CapacityTypeOnDemand
	// a and b (m5.4, $0.28) run a one-core pod each; c (m5.1, $0.07) is
	// crowded with eight small pods. The pool costs $0.63 and 2+2+9 = 13
	// to disrupt: deleting a scores (0.28/0.63)/(2/13) = 2.89, over a
	// alone it would score 1.
	pool := func(c *cluster) {
		c.launched("a", m5n(4), od, "")
		c.launched("b", m5n(4), od, "")
		c.launched("c", m5n(1), od, "")
		c.pod("a1", "a", requests("1"))
		c.pod("b1", "b", requests("1"))
		for i := range 8 {
			c.pod(fmt.Sprintf("c%d", i), "c", requests("0.1"))
		}
	}
	cases := []struct {
		name      string
		threshold string
		method    Method
		want      []string
	}{
		{name: "single-node delete", threshold: "1.5", method: SingleNodeConsolidation{}, want: []string{"a"}},
		{name: "multi-node delete", threshold: "1.2", method: MultiNodeConsolidation{}, want: []string{"a", "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			balancedPool(tc.threshold)(c)
			pool(c)
			c.snapshot(m5...)
			now := t0.Add(time.Hour)
			d := Plan(c.in, []Method{tc.method}, now)
			if diff := cmp.Diff(tc.want, names(d.Command.Candidates), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("planned (-want +got):\n%s", diff)
			}
			cmd, why := Options{Methods: []Method{tc.method}}.validate(d.Command, c.in, now.Add(15*time.Second))
			if why != "" {
				t.Fatalf("validation abandoned the command: %s", why)
			}
			if diff := cmp.Diff(d.Command.Scores, cmd.Scores, cmpopts.EquateApprox(0, 0.0001)); diff != "" {
				t.Errorf("scores at validation (-planned +validated):\n%s", diff)
			}
		})
	}
}

func notCheaper(node string) Verdict {
	return Verdict{NodeClaim: "nc-" + node, Node: node, Method: "SingleNodeConsolidation", Event: EventUnconsolidatable, Code: VerdictUnconsolidatable,
		Message: msgNotCheaper}
}

func TestUnderutilizedIsNotScored(t *testing.T) {
	c := newCluster()
	underutilized(c)
	poolCapacityTypes(c, v1.CapacityTypeOnDemand)
	c.launched("a", m5n(4), v1.CapacityTypeOnDemand, "")
	c.launched("b", m5n(4), v1.CapacityTypeOnDemand, "")
	for _, p := range []string{"a1", "a2", "a3", "a4", "a5"} {
		c.pod(p, "a", requests("0.5"))
	}
	c.pod("b1", "b", requests("3.8"))
	c.snapshot(m5...)
	d := Plan(c.in, []Method{SingleNodeConsolidation{}}, t0.Add(time.Hour))
	if !d.Found || len(d.Scores) > 0 || len(d.Command.Scores) > 0 {
		t.Errorf("found %v, scores %+v: WhenEmptyOrUnderutilized takes the replace unscored", d.Found, d.Scores)
	}
}

// A started move's scores are events on its NodeClaims and Nodes; a
// skipped move's are its verdicts' events.
func TestBalancedEvents(t *testing.T) {
	cases := []struct {
		name  string
		setup func(c *cluster)
		want  []effects.Event
	}{
		{name: "taken", setup: spareNode, want: []effects.Event{
			{Object: effects.NodeClaimRef("nc-a"), Type: corev1.EventTypeNormal, Reason: EventConsolidationApproved, Action: "SingleNodeConsolidation",
				Message: "score 1.00 >= threshold 0.50 (k: 2, savings 50.0%, disruption 50.0%)"},
			{Object: effects.NodeRef("a"), Type: corev1.EventTypeNormal, Reason: EventConsolidationApproved, Action: "SingleNodeConsolidation",
				Message: "score 1.00 >= threshold 0.50 (k: 2, savings 50.0%, disruption 50.0%)"},
		}},
		{name: "skipped", setup: crowdedNode, want: []effects.Event{
			{Object: effects.NodeClaimRef("nc-a"), Type: corev1.EventTypeNormal, Reason: EventConsolidationRejected, Action: "SingleNodeConsolidation",
				Message: "score 0.16 < threshold 0.50 (k: 2, savings 11.1%, disruption 71.4%)"},
			{Object: effects.NodeRef("a"), Type: corev1.EventTypeNormal, Reason: EventConsolidationRejected, Action: "SingleNodeConsolidation",
				Message: "score 0.16 < threshold 0.50 (k: 2, savings 11.1%, disruption 71.4%)"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			balancedPool("")(c)
			tc.setup(c)
			c.snapshot(m5...)
			e := NewEngine(Options{Methods: []Method{SingleNodeConsolidation{}}})
			tick, err := e.Tick(c.in, nil, t0.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			var got []effects.Event
			for _, eff := range tick.Effects {
				if ev, ok := eff.(effects.Event); ok && (ev.Reason == EventConsolidationApproved || ev.Reason == EventConsolidationRejected) {
					got = append(got, ev)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("score events (-want +got):\n%s", diff)
			}
		})
	}
}

// The message gives k as 1/threshold, to three digits for a threshold
// that is not 1/k of a whole k.
func TestMoveScoreMessage(t *testing.T) {
	for _, tc := range []struct {
		s    MoveScore
		want string
	}{
		{MoveScore{Score: 3.333, Threshold: 0.5, SavingsFraction: 0.125, DisruptionFraction: 0.0375, Taken: true},
			"score 3.33 >= threshold 0.50 (k: 2, savings 12.5%, disruption 3.8%)"},
		{MoveScore{Score: 0.25, Threshold: 0.3, SavingsFraction: 0.05, DisruptionFraction: 0.2},
			"score 0.25 < threshold 0.30 (k: 3.33, savings 5.0%, disruption 20.0%)"},
	} {
		if got := tc.s.Message(); got != tc.want {
			t.Errorf("message %q, want %q", got, tc.want)
		}
	}
}
