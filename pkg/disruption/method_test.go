package disruption

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// fixed is a method that yields its candidates' first node, or nothing.
type fixed struct {
	name   string
	reason v1.DisruptionReason
	yields bool
	saw    *map[string]int
}

func (f fixed) Name() string                { return f.name }
func (f fixed) Reason() v1.DisruptionReason { return f.reason }
func (f fixed) Compute(env Env) Outcome {
	*f.saw = env.Allowed
	if !f.yields {
		return Outcome{}
	}
	return Outcome{Command: Command{Method: f.name, Reason: f.reason, Candidates: env.Candidates[:1]}}
}

// Methods run in order, each with its own reason's budgets; the first
// that yields a command wins and the rest do not run.
func TestPlanRunsMethodsInOrder(t *testing.T) {
	c := newCluster("a", "b")
	c.pool().Spec.Disruption.Budgets = []v1.Budget{
		{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}},
		{Nodes: "1"},
	}
	var drift, empty, never map[string]int
	d := Plan(c.in, []Method{
		fixed{"Drift", v1.DisruptionReasonDrifted, false, &drift},
		fixed{"Emptiness", v1.DisruptionReasonEmpty, true, &empty},
		fixed{"Later", v1.DisruptionReasonUnderutilized, true, &never},
	}, t0)
	if !d.Found || d.Command.Method != "Emptiness" {
		t.Fatalf("command %+v %v; want Emptiness's", d.Command, d.Found)
	}
	if drift["default"] != 0 || empty["default"] != 1 || never != nil {
		t.Errorf("budgets seen: drift %v, empty %v, later %v; want 0, 1 and not run", drift, empty, never)
	}
}

func TestReturns(t *testing.T) {
	methods := Methods(DefaultGates())
	for _, tc := range []struct {
		method string
		from   Return
		want   bool
	}{
		{method: ReturnToPreferred{}.Name(), from: ReturnFallback, want: true},
		{method: ReturnToPreferred{}.Name(), from: ReturnLaterTerm},
		{method: ReturnToPreferredTerm{}.Name(), from: ReturnLaterTerm, want: true},
		{method: ReturnToPreferredTerm{}.Name(), from: ReturnFallback},
		{method: Drift{}.Name(), from: ReturnFallback},
		{method: "NoSuchMethod", from: ReturnFallback},
		{method: "", from: ReturnLaterTerm},
	} {
		if got := Returns(methods, tc.method, tc.from); got != tc.want {
			t.Errorf("Returns(%q, %d) = %t, want %t", tc.method, tc.from, got, tc.want)
		}
	}
}

func TestBudgetReasons(t *testing.T) {
	for _, tc := range []struct {
		name    string
		methods []Method
		want    []v1.DisruptionReason
	}{
		{name: "none"},
		{name: "each once, in the methods' order", methods: []Method{Emptiness{}, Drift{}, SingleNodeConsolidation{}, ReturnToPreferredTerm{}, Emptiness{}},
			want: []v1.DisruptionReason{v1.DisruptionReasonEmpty, v1.DisruptionReasonDrifted, v1.DisruptionReasonUnderutilized}},
		{name: "the controller's", methods: Methods(DefaultGates()),
			want: []v1.DisruptionReason{v1.DisruptionReasonDrifted, v1.DisruptionReasonEmpty, v1.DisruptionReasonUnderutilized}},
		{name: "a new reason", methods: []Method{fixed{name: "New", reason: "Rebalanced"}, Emptiness{}},
			want: []v1.DisruptionReason{"Rebalanced", v1.DisruptionReasonEmpty}},
	} {
		if diff := cmp.Diff(tc.want, BudgetReasons(tc.methods)); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, diff)
		}
	}
}
