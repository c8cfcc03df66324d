package disruption

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// Command is one disruption decision: the candidates to disrupt together,
// by which method and for which budget reason, and the replacements to
// launch (and see initialized) before they go.
type Command struct {
	Method       string
	Reason       v1.DisruptionReason
	Candidates   []Candidate
	Replacements []*provisioning.NodeClaim
	// Scores are the move's scores, one per NodePool whose policy is
	// Balanced (balanced.go).
	Scores []MoveScore
	// Deleting are effects the method adds when the candidates are
	// deleted, before the deletions (Repair's drain deadline and count).
	Deleting []effects.Effect
}

// Names are the command's candidates' NodeClaim names.
func (c Command) Names() []string {
	out := make([]string, 0, len(c.Candidates))
	for _, cand := range c.Candidates {
		out = append(out, cand.NodeClaim.Name)
	}
	return out
}

// Env is what a method decides over.
type Env struct {
	// Candidates are every candidate, blocked ones included; when a
	// command is validated again, only its own.
	Candidates []Candidate
	// All are every candidate, also while a command is validated (Repair
	// counts its NodePools' nodes over them).
	All []Candidate
	// Allowed is how many nodes of each NodePool the method's reason may
	// still disrupt.
	Allowed map[string]int
	Now     time.Time
	// Simulate asks where the candidates' pods would go without them;
	// SimulateKeepingPreferences places them only where every preferred
	// affinity and ScheduleAnyway spread still holds.
	Simulate                   func([]Candidate) Simulation
	SimulateKeepingPreferences func([]Candidate) Simulation
	// SimulateInPlace places one candidate's pods on one new node of
	// their own, in the candidate's zone (see inPlace); nil skips it.
	SimulateInPlace func(Candidate) Simulation
	// Unavailable is until when offerings were last unavailable;
	// InstanceTypes are each NodePool's, as the snapshot has them.
	Unavailable   cloudprovider.UnavailableHistory
	InstanceTypes map[string][]*cloudprovider.InstanceType
	// StaticReplacements is how many drifted nodes each static NodePool
	// may replace now (docs/static.md).
	StaticReplacements map[string]int64
}

// Outcome is what a method found: a command (when it has candidates),
// the nodes it wanted but could not take, and how many nodes it found
// eligible before blockers and budgets.
type Outcome struct {
	Command  Command
	Verdicts []Verdict
	Eligible int
	// Scores are the moves the method scored (Balanced), taken or not.
	Scores []MoveScore
	// WakeAt is when a verdict may change by time alone (zero: only a
	// change in the cluster changes it).
	WakeAt time.Time
}

// wake moves out.WakeAt to t if t is after now and earlier.
func (out *Outcome) wake(t, now time.Time) {
	if t.After(now) && (out.WakeAt.IsZero() || t.Before(out.WakeAt)) {
		out.WakeAt = t
	}
}

// Method is one way of disrupting nodes.
type Method interface {
	Name() string
	Reason() v1.DisruptionReason
	Compute(env Env) Outcome
}

// A method may declare optional capabilities by implementing these
// interfaces; the engine asks for them, never for a method by name, so a
// new method touches only its own file and the list in Methods
// (docs/disruption.md, "Adding a method").

// Settling is a method whose result changes only when the cluster does
// (it simulates every candidate): while the cluster is as it was when
// the method last found nothing, the engine does not run it again.
type Settling interface {
	Method
	Settles()
}

// Consolidating is a method that moves pods to save: its simulations
// move no pod onto a node still inside its NodePool's consolidateAfter
// (UnderConsolidateAfter), as in the reference's v1.14 consolidation
// simulations (IsConsolidationSimulation).
type Consolidating interface {
	Method
	Consolidating()
}

// Eventual is a method whose disruption a NodeClaim's
// terminationGracePeriod bounds: a pod's do-not-disrupt or PDB does not
// stop it deleting a NodeClaim that has one (Candidate.BlockedFor); the
// drain honours the pod until the grace period ends.
type Eventual interface {
	Method
	Eventual()
}

// BackingOff is a method whose failed commands back off: when a
// replacement fails to launch or initialize, the candidate's NodeClaim
// gets the annotations Backoff returns, so the method waits before
// trying it again.
type BackingOff interface {
	Method
	Backoff(c Candidate, now time.Time) map[string]string
}

// SelfBudgeted is a method that keeps its own budget (Repair's, per
// NodePool) rather than the NodePool's disruption budgets: its reason is
// none that budgets count.
type SelfBudgeted interface {
	Method
	OwnBudget()
}

// Returning is a method that returns nodes to what their NodePool
// prefers; `capstan explain` reports its progress on the nodes it returns
// from what Returns names, by the method's name as the DisruptionReason
// condition and the verdicts carry it.
type Returning interface {
	Method
	Returns() Return
}

// Return is what a Returning method returns a node from.
type Return int

const (
	// ReturnFallback is capacity the node fell back to (FallbackFrom).
	ReturnFallback Return = iota + 1
	// ReturnLaterTerm is a later term of its pods' required node
	// affinity (LaterTerms).
	ReturnLaterTerm
)

// Returns reports whether the method of methods named name returns nodes
// from r.
func Returns(methods []Method, name string, r Return) bool {
	m, ok := methodNamed(methods, name)
	if !ok {
		return false
	}
	ret, ok := m.(Returning)
	return ok && ret.Returns() == r
}

// BudgetReasons are the reasons methods disrupt for (their Reason), each
// once, in the methods' order: the reasons budgets are counted for.
func BudgetReasons(methods []Method) []v1.DisruptionReason {
	var out []v1.DisruptionReason
	for _, m := range methods {
		if _, own := m.(SelfBudgeted); !own && !slices.Contains(out, m.Reason()) {
			out = append(out, m.Reason())
		}
	}
	return out
}

// methodNamed is the method of the list named name, as commands carry it.
func methodNamed(methods []Method, name string) (Method, bool) {
	for _, m := range methods {
		if m.Name() == name {
			return m, true
		}
	}
	return nil, false
}

// Gates are the feature gates that shape the method list.
type Gates struct {
	Drift                   bool
	SpotToSpotConsolidation bool
	// NodeRepair turns on the repair of unhealthy nodes (WithRepair).
	NodeRepair bool
}

// DefaultGates are the reference's: Drift on (beta), spot-to-spot
// consolidation and node repair off (alpha).
func DefaultGates() Gates { return Gates{Drift: true} }

// Methods are the voluntary methods in seed 004's order: drift (with its
// gate) and expected interruptions, then consolidation: empty nodes,
// several nodes at once, one node; last, returns to preferred capacity
// (spot) and to earlier ordered terms (issue 21). WithRepair puts node
// repair before them.
func Methods(g Gates) []Method {
	var out []Method
	if g.Drift {
		out = append(out, Drift{})
	}
	return append(out, ExpectedInterruption{}, Emptiness{}, MultiNodeConsolidation{SpotToSpot: g.SpotToSpotConsolidation},
		SingleNodeConsolidation{SpotToSpot: g.SpotToSpotConsolidation}, ReturnToPreferred{}, ReturnToPreferredTerm{})
}

// Decision is a planning round: the command (if any method yielded one),
// every verdict met on the way and what each method found eligible.
type Decision struct {
	Command  Command
	Found    bool
	Verdicts []Verdict
	Eligible map[string]int
	// Scores are every move scored on the way (Balanced), taken or not.
	Scores []MoveScore
	// WakeAt is the earliest a method's verdict may change by time alone.
	WakeAt time.Time
}

// Plan runs the methods one at a time over in: the first that yields a
// command wins. Budgets are evaluated per NodePool for each method's
// reason.
func Plan(in Input, methods []Method, now time.Time) Decision {
	return plan(in, Candidates(in, now), methods, now)
}

// plan is Plan over in's candidates, worked out once by the caller: each
// costs a solve of the pending pods (nominatedNodes).
func plan(in Input, candidates []Candidate, methods []Method, now time.Time) Decision {
	d := Decision{Eligible: map[string]int{}}
	for _, m := range methods {
		allowed := AllowedByPool(in, m.Reason(), now)
		out := m.Compute(newEnv(in, candidates, allowed, now, m))
		d.Eligible[m.Name()] = out.Eligible
		d.Verdicts = append(d.Verdicts, out.Verdicts...)
		d.Scores = append(d.Scores, out.Scores...)
		if !out.WakeAt.IsZero() && (d.WakeAt.IsZero() || out.WakeAt.Before(d.WakeAt)) {
			d.WakeAt = out.WakeAt
		}
		if len(out.Command.Candidates) > 0 {
			d.Command, d.Found = out.Command, true
			return d
		}
	}
	return d
}

// newEnv is the Env method m decides over; a Consolidating method's
// simulations place no pod on a node UnderConsolidateAfter.
func newEnv(in Input, candidates []Candidate, allowed map[string]int, now time.Time, m Method) Env {
	var settling map[string]bool
	if _, ok := m.(Consolidating); ok {
		settling = UnderConsolidateAfter(in, now)
	}
	return Env{Candidates: candidates, All: candidates, Allowed: allowed, Now: now, Simulate: simulator(in, false, settling),
		SimulateKeepingPreferences: simulator(in, true, settling), SimulateInPlace: inPlace(in),
		Unavailable: in.Unavailable, InstanceTypes: in.Snapshot.Input.InstanceTypes, StaticReplacements: staticReplacements(in)}
}

// AllowedByPool is Allowed for each NodePool, counting its NodeClaims
// with nodes, and those being deleted or NotReady. A NodePool whose
// budgets cannot be evaluated (a bad time zone or schedule, which its
// ValidationSucceeded condition reports) allows nothing; the others are
// not held back by it.
func AllowedByPool(in Input, reason v1.DisruptionReason, now time.Time) map[string]int {
	nodes := map[string]*corev1.Node{}
	for _, n := range in.Nodes {
		nodes[n.Name] = n
	}
	total, disrupting := map[string]int{}, map[string]int{}
	for _, nc := range in.NodeClaims {
		node := nodes[nc.Status.NodeName]
		if node == nil {
			continue
		}
		pool := nc.Labels[v1.NodePoolLabelKey]
		total[pool]++
		if nc.DeletionTimestamp != nil || node.DeletionTimestamp != nil || !ready(node) {
			disrupting[pool]++
		}
	}
	out := make(map[string]int, len(in.NodePools))
	for _, np := range in.NodePools {
		n, err := Allowed(np, reason, total[np.Name], disrupting[np.Name], now)
		if err != nil {
			n = 0
		}
		out[np.Name] = n
	}
	return out
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
