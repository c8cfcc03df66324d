package disrupter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/capstan-dev/capstan/pkg/disruption"
)

// A planning round's scored moves are counted by decision and their
// scores observed.
func TestRecordScores(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	m.recordScores([]disruption.MoveScore{
		{Method: "SingleNodeConsolidation", NodePool: "web", Score: 0.2, Threshold: 0.5},
		{Method: "SingleNodeConsolidation", NodePool: "web", Score: 0.4, Threshold: 0.5},
		{Method: "SingleNodeConsolidation", NodePool: "web", Score: 1.5, Threshold: 0.5, Taken: true},
	})
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
	for decision, want := range map[string]got{decisionSkipped: {Count: 2, Sum: 0.6, Counts: 2}, decisionTaken: {Count: 1, Sum: 1.5, Counts: 1}} {
		h := read(m.score.WithLabelValues(decision, "web", "SingleNodeConsolidation").(prometheus.Metric)).GetHistogram()
		c := read(m.moves.WithLabelValues(decision, "web", "SingleNodeConsolidation")).GetCounter()
		g := got{Count: h.GetSampleCount(), Sum: h.GetSampleSum(), Counts: c.GetValue()}
		if diff := cmp.Diff(want, g, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
			t.Errorf("%s (-want +got):\n%s", decision, diff)
		}
	}
}
