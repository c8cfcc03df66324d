package disruption

import (
	"fmt"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// Balanced consolidation scores each move by its savings against its
// disruption, both as fractions of the NodePool's totals, and takes it
// only when the score reaches the pool's threshold (the reference's
// designs/balanced-consolidation.md and
// pkg/controllers/disruption/balanced.go at v1.14.1; docs/disruption.md,
// "Balanced consolidation").
const (
	// BalancedK is the reference's fixed k: a move is taken when its
	// score is at least 1/k.
	BalancedK = 2
	// DefaultConsolidationThreshold is the threshold a Balanced NodePool
	// has without capstan.dev/consolidation-threshold: the reference's 1/k.
	DefaultConsolidationThreshold = 1.0 / BalancedK
)

// Event reasons of a scored move: the reference's, on the NodeClaim and
// the Node, the score and threshold in the message.
const (
	EventConsolidationApproved = "ConsolidationApproved"
	EventConsolidationRejected = "ConsolidationRejected"
)

// ConsolidationThresholdOf is the lowest score np's consolidation moves
// must reach, from capstan.dev/consolidation-threshold (a positive
// decimal; unset: DefaultConsolidationThreshold). An invalid value is an
// *AnnotationError: the NodePool's ValidationSucceeded condition reports
// it, and its non-empty nodes are not consolidated.
func ConsolidationThresholdOf(np *v1.NodePool) (float64, error) {
	v, ok := np.Annotations[v1.ConsolidationThresholdAnnotationKey]
	if !ok {
		return DefaultConsolidationThreshold, nil
	}
	t, err := strconv.ParseFloat(v, 64)
	if err != nil || t <= 0 || math.IsInf(t, 0) || math.IsNaN(t) {
		return 0, &AnnotationError{Key: v1.ConsolidationThresholdAnnotationKey, Problem: fmt.Sprintf("%q is not a positive decimal number", v)}
	}
	return t, nil
}

// PoolTotals are what a NodePool's nodes cost an hour and to disrupt, all
// of them, candidates or not: the denominators of its moves' fractions.
type PoolTotals struct {
	Cost           float64
	DisruptionCost float64
}

// Totals are PoolTotals by NodePool name, over every candidate (blocked
// ones too: a node that may not move still counts in its pool).
func Totals(cands []Candidate) map[string]PoolTotals {
	out := map[string]PoolTotals{}
	for _, c := range cands {
		t := out[c.NodePool.Name]
		if c.Priced {
			t.Cost += c.Price
		}
		t.DisruptionCost += RescheduleCost(c)
		out[c.NodePool.Name] = t
	}
	return out
}

// MoveScore is one NodePool's score of a consolidation move; explain
// and simulate's JSON show it as is (docs/simulate.md).
type MoveScore struct {
	Method     string   `json:"method"`
	NodePool   string   `json:"nodePool"`
	NodeClaims []string `json:"nodeClaims"`
	// Savings is the pool's share of what the move saves an hour;
	// DisruptionCost what evicting its nodes' pods costs.
	Savings        float64 `json:"savings"`
	DisruptionCost float64 `json:"disruptionCost"`
	// SavingsFraction and DisruptionFraction are those over the pool's
	// totals; Score is the first over the second (0 without savings).
	SavingsFraction    float64 `json:"savingsFraction"`
	DisruptionFraction float64 `json:"disruptionFraction"`
	Score              float64 `json:"score"`
	Threshold          float64 `json:"threshold"`
	// Taken: the score reached the threshold.
	Taken bool `json:"taken"`
}

// Message says the score against the threshold, in the reference's
// words (its k is 1/threshold).
func (s MoveScore) Message() string {
	op := "<"
	if s.Taken {
		op = ">="
	}
	return fmt.Sprintf("score %.2f %s threshold %.2f (k: %.3g, savings %.1f%%, disruption %.1f%%)",
		s.Score, op, s.Threshold, 1/s.Threshold, s.SavingsFraction*100, s.DisruptionFraction*100)
}

// Event is the reason the score is reported under.
func (s MoveScore) Event() string {
	if s.Taken {
		return EventConsolidationApproved
	}
	return EventConsolidationRejected
}

// Score is a move's score: savings over disruption, each a fraction of
// the pool's totals; no savings (or nothing to weigh them against)
// scores 0, which no threshold takes.
func Score(savings, disruptionCost float64, totals PoolTotals, threshold float64) MoveScore {
	s := MoveScore{Savings: savings, DisruptionCost: disruptionCost, Threshold: threshold}
	if totals.Cost > 0 && totals.DisruptionCost > 0 {
		s.SavingsFraction, s.DisruptionFraction = savings/totals.Cost, disruptionCost/totals.DisruptionCost
	}
	if s.SavingsFraction > 0 && s.DisruptionFraction > 0 {
		s.Score = s.SavingsFraction / s.DisruptionFraction
	}
	s.Taken = s.Score >= threshold
	return s
}

// balance is what scoring a method's moves needs: each pool's totals and
// the thresholds of the Balanced pools (bad: those whose annotation is
// invalid).
type balance struct {
	totals     map[string]PoolTotals
	thresholds map[string]float64
	bad        map[string]error
}

// The totals are over env.All: while a command is validated again,
// env.Candidates holds only its own nodes, and a move's fractions must be
// the ones it was planned with.
func newBalance(env Env) balance {
	b := balance{totals: Totals(env.All), thresholds: map[string]float64{}, bad: map[string]error{}}
	for _, c := range env.All {
		np := c.NodePool
		if np.Spec.Disruption.ConsolidationPolicy != v1.ConsolidationPolicyBalanced {
			continue
		}
		if t, err := ConsolidationThresholdOf(np); err != nil {
			b.bad[np.Name] = err
		} else {
			b.thresholds[np.Name] = t
		}
	}
	return b
}

// scored reports whether c's pool scores its moves.
func (b balance) scored(c Candidate) bool {
	_, ok := b.thresholds[c.NodePool.Name]
	return ok
}

// promising are the candidates whose best score reaches their pool's
// threshold, or whose pool does not score; each of the others is scored
// and gets its verdict.
func (b balance) promising(m Method, cands []Candidate, out *Outcome) []Candidate {
	keep := cands[:0:0]
	for _, c := range cands {
		if !b.scored(c) {
			keep = append(keep, c)
			continue
		}
		if s := b.best(m, c); !s.Taken {
			out.Scores = append(out.Scores, s)
			out.Verdicts = append(out.Verdicts, rejected(c, s))
			continue
		}
		keep = append(keep, c)
	}
	return keep
}

// best is c's best possible score, deleting it with no replacement (the
// reference's CanPassThreshold): below the threshold, no move of c's
// alone is taken, and it need not be simulated.
func (b balance) best(m Method, c Candidate) MoveScore {
	s := Score(c.Price, RescheduleCost(c), b.totals[c.NodePool.Name], b.thresholds[c.NodePool.Name])
	s.Method, s.NodePool, s.NodeClaims = m.Name(), c.NodePool.Name, []string{c.NodeClaim.Name}
	return s
}

// score is each scored pool's score of deleting cs and launching
// replacements, and whether every one of them takes it. A move over
// several pools gives each its share of the savings by its share of the
// candidates' cost, as the reference does.
func (b balance) score(m Method, cs []Candidate, replacements []*provisioning.NodeClaim) ([]MoveScore, bool) {
	source := 0.0
	for _, c := range cs {
		source += c.Price
	}
	savings := source - replacementPrice(replacements)
	var out []MoveScore
	taken := true
	seen := map[string]bool{}
	for _, c := range cs {
		pool := c.NodePool.Name
		if seen[pool] || !b.scored(c) {
			continue
		}
		seen[pool] = true
		var names []string
		cost, disruption := 0.0, 0.0
		for _, o := range cs {
			if o.NodePool.Name == pool {
				cost, disruption = cost+o.Price, disruption+RescheduleCost(o)
				names = append(names, o.NodeClaim.Name)
			}
		}
		share := savings
		if source > 0 {
			share = savings * cost / source
		}
		s := Score(share, disruption, b.totals[pool], b.thresholds[pool])
		s.Method, s.NodePool, s.NodeClaims = m.Name(), pool, names
		out = append(out, s)
		taken = taken && s.Taken
	}
	return out, taken
}

// replacementPrice is what the replacements cost an hour: each its
// cheapest instance type, as the reference estimates, priced as
// consolidation prices a replacement (WorstPrice: an offering it may
// launch as, so a replacement that may land on on-demand is not priced
// as spot).
func replacementPrice(replacements []*provisioning.NodeClaim) float64 {
	total := 0.0
	for _, r := range replacements {
		cheapest, found := math.Inf(1), false
		for _, it := range r.InstanceTypes {
			if worst, ok := WorstPrice(it, r.Requirements); ok && worst < cheapest {
				cheapest, found = worst, true
			}
		}
		if found {
			total += cheapest
		}
	}
	return total
}

// approvedEvents report a command's scores on its candidates' NodeClaims
// and Nodes, as the reference reports a taken move.
func approvedEvents(cmd Command) []effects.Effect {
	var out []effects.Effect
	for _, s := range cmd.Scores {
		for _, c := range cmd.Candidates {
			if c.NodePool.Name != s.NodePool {
				continue
			}
			for _, obj := range []effects.Ref{effects.NodeClaimRef(c.NodeClaim.Name), effects.NodeRef(c.Node.Name)} {
				out = append(out, effects.Event{Object: obj, Type: corev1.EventTypeNormal, Reason: s.Event(), Action: cmd.Method, Message: s.Message()})
			}
		}
	}
	return out
}

// rejected is the verdict of a candidate whose move s does not take.
func rejected(c Candidate, s MoveScore) Verdict {
	return Verdict{NodeClaim: c.NodeClaim.Name, Node: c.Node.Name, Method: s.Method, Event: EventConsolidationRejected, Code: VerdictBelowThreshold, Message: s.Message()}
}
