package disrupter

import "github.com/capstan-dev/capstan/pkg/disruption"

// Balanced consolidation's metrics (docs/disruption.md, "Balanced
// consolidation").
const (
	MetricConsolidationScore = "capstan_consolidation_score"
	MetricConsolidationMoves = "capstan_consolidation_moves_total"
)

// scoreBuckets are the reference's (designs/balanced-consolidation.md,
// "Observability"): fine around the default threshold of 0.5.
var scoreBuckets = []float64{0.1, 0.25, 0.33, 0.5, 1.0, 2.0, 5.0, 10.0}

// Move decisions, as the metrics label them.
const (
	decisionTaken   = "taken"
	decisionSkipped = "skipped"
)

// recordScores counts a planning round's scored moves and observes
// their scores.
func (m *Metrics) recordScores(scores []disruption.MoveScore) {
	for _, s := range scores {
		decision := decisionSkipped
		if s.Taken {
			decision = decisionTaken
		}
		m.score.WithLabelValues(decision, s.NodePool, s.Method).Observe(s.Score)
		m.moves.WithLabelValues(decision, s.NodePool, s.Method).Inc()
	}
}
