package disrupter

import (
	"fmt"
	"strings"

	"github.com/capstan-dev/capstan/pkg/disruption"
)

// Balanced consolidation's metrics (docs/disruption.md, "Balanced
// consolidation").
const (
	MetricConsolidationScore = "capstan_consolidation_score"
	MetricConsolidationMoves = "capstan_consolidation_moves_total"
)

// scoreBuckets are the reference's (designs/balanced-consolidation.md,
// "Observability"): fine around the default threshold of 0.5.
func scoreBuckets() []float64 { return []float64{0.1, 0.25, 0.33, 0.5, 1.0, 2.0, 5.0, 10.0} }

// skippedMemo bounds how many skipped moves are remembered so that one
// weighed again in later rounds, unchanged, is not counted again.
const skippedMemo = 4096

// Move decisions, as the metrics label them.
const (
	decisionTaken   = "taken"
	decisionSkipped = "skipped"
)

// recordScores counts each move once per decision and observes its
// score: a taken move when its command starts (started, nil when none
// did), a skipped one the first round it is weighed with that score (a
// move re-scored unchanged every round is one decision, not many).
func (m *Metrics) recordScores(planned []disruption.MoveScore, started *disruption.Command) {
	for _, s := range planned {
		if s.Taken {
			continue
		}
		key := fmt.Sprintf("%s/%s/%s/%.4g", s.Method, s.NodePool, strings.Join(s.NodeClaims, ","), s.Score)
		if _, seen := m.skipped.Get(key); seen {
			continue
		}
		m.skipped.Add(key, nil)
		m.observeScore(decisionSkipped, s)
	}
	if started != nil {
		for _, s := range started.Scores {
			m.observeScore(decisionTaken, s)
		}
	}
}

func (m *Metrics) observeScore(decision string, s disruption.MoveScore) {
	m.score.WithLabelValues(decision, s.NodePool, s.Method).Observe(s.Score)
	m.moves.WithLabelValues(decision, s.NodePool, s.Method).Inc()
}
