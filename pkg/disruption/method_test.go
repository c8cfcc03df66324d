package disruption

import (
	"testing"

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
