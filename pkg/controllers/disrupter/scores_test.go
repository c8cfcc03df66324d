package disrupter

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/capstan-dev/capstan/pkg/disruption"
)

// Each move is counted once per decision: a skipped move re-scored
// unchanged in later rounds once, a taken one when its command starts
// (not each round it is planned), and a skipped move whose score changed
// again.
func TestRecordScores(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	skipped := []disruption.MoveScore{
		{Method: "SingleNodeConsolidation", NodePool: "web", NodeClaims: []string{"a"}, Score: 0.2, Threshold: 0.5},
		{Method: "SingleNodeConsolidation", NodePool: "web", NodeClaims: []string{"b"}, Score: 0.4, Threshold: 0.5},
	}
	taken := disruption.MoveScore{Method: "SingleNodeConsolidation", NodePool: "web", NodeClaims: []string{"c"}, Score: 1.5, Threshold: 0.5, Taken: true}
	// Two rounds weigh the same moves; the second starts the taken one.
	m.recordScores(append(slices.Clone(skipped), taken), nil)
	m.recordScores(append(slices.Clone(skipped), taken), &disruption.Command{Scores: []disruption.MoveScore{taken}})
	// a's score changed: a new decision.
	m.recordScores([]disruption.MoveScore{{Method: "SingleNodeConsolidation", NodePool: "web", NodeClaims: []string{"a"}, Score: 0.3, Threshold: 0.5}}, nil)
	read := func(c prometheus.Metric) *dto.Metric {
		out := &dto.Metric{}
		if err := c.Write(out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	type got struct {
		Count  uint64
		Sum    float64
		Counts float64
	}
	for decision, want := range map[string]got{decisionSkipped: {Count: 3, Sum: 0.9, Counts: 3}, decisionTaken: {Count: 1, Sum: 1.5, Counts: 1}} {
		h := read(m.score.WithLabelValues(decision, "web", "SingleNodeConsolidation").(prometheus.Metric)).GetHistogram()
		c := read(m.moves.WithLabelValues(decision, "web", "SingleNodeConsolidation")).GetCounter()
		g := got{Count: h.GetSampleCount(), Sum: h.GetSampleSum(), Counts: c.GetValue()}
		if diff := cmp.Diff(want, g, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
			t.Errorf("%s (-want +got):\n%s", decision, diff)
		}
	}
}
