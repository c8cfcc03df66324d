package simulator

import (
	"strings"
	"time"

	"github.com/capstan-dev/capstan/pkg/disruption"
)

// ConsolidationScore is a consolidation move a Balanced NodePool scored,
// taken or skipped, when a planning round weighed it (docs/simulate.md).
type ConsolidationScore struct {
	At string `json:"at"`
	disruption.MoveScore
}

// scored records a planning round's scores: a move weighed again with
// the same outcome (the world changed elsewhere) is not repeated.
func (r *recorder) scored(now time.Time, scores []disruption.MoveScore) {
	if r.lastScores == nil {
		r.lastScores = map[string]disruption.MoveScore{}
	}
	for _, s := range scores {
		key := s.Method + "\x00" + s.NodePool + "\x00" + strings.Join(s.NodeClaims, ",")
		if last, ok := r.lastScores[key]; ok && last.Score == s.Score && last.Taken == s.Taken && last.Threshold == s.Threshold {
			continue
		}
		r.lastScores[key] = s
		r.scores = append(r.scores, ConsolidationScore{At: offset(r.start, now), MoveScore: s})
	}
}
