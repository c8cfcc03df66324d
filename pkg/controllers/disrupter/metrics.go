package disrupter

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/lru"

	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/interruption"
)

// Metrics are disruption's Prometheus metrics.
type Metrics struct {
	decisions  *prometheus.CounterVec
	eligible   *prometheus.GaugeVec
	allowed    *prometheus.GaugeVec
	evaluation prometheus.Histogram
	disrupted  *prometheus.CounterVec
	received   *prometheus.CounterVec
	// score and moves are Balanced consolidation's (scores.go).
	score    *prometheus.HistogramVec
	moves    *prometheus.CounterVec
	skipped  *lru.Cache
	repaired *prometheus.CounterVec
}

// NewMetrics registers disruption's metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: disruption.MetricDecisions, Help: "Disruption commands carried out (candidates deleted), by method and reason.",
		}, []string{"method", "reason"}),
		eligible: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "capstan_disruption_eligible_nodes", Help: "Nodes each method found eligible in the last evaluation, before blockers and budgets.",
		}, []string{"method"}),
		allowed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "capstan_disruption_budget_allowed", Help: "Disruptions each NodePool's budgets allow now, by reason.",
		}, []string{"nodepool", "reason"}),
		evaluation: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "capstan_disruption_evaluation_duration_seconds", Help: "Time one disruption evaluation (all methods) took.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
		disrupted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: disruption.MetricDisrupted, Help: "NodeClaims deleted by disruption, voluntary or forceful, by reason (Empty, Underutilized, Drifted, Unhealthy, Expired, Interrupted).",
		}, []string{"reason"}),
		repaired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: disruption.MetricRepaired, Help: "Unhealthy NodeClaims repaired (replaced, then deleted), by NodePool and the node condition that made them unhealthy.",
		}, []string{"nodepool", "condition"}),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: interruption.MetricReceived, Help: "Interruption notices received from the cloud, by kind (each notice counted once).",
		}, []string{"kind"}),
		score: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: MetricConsolidationScore, Help: "Scores of the consolidation moves Balanced NodePools weighed, by decision (taken, skipped), NodePool and method.",
			Buckets: scoreBuckets(),
		}, []string{"decision", "nodepool", "method"}),
		moves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricConsolidationMoves, Help: "Consolidation moves Balanced NodePools weighed, by decision (taken, skipped), NodePool and method.",
		}, []string{"decision", "nodepool", "method"}),
		skipped: lru.New(skippedMemo),
	}
	for _, c := range []prometheus.Collector{m.decisions, m.eligible, m.allowed, m.evaluation, m.disrupted, m.received, m.score, m.moves, m.repaired} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Counters makes the counters disruption's effects add to
// (effects.Metric) the applier's.
func (m *Metrics) Counters(c *apply.Counters) {
	c.Add(disruption.MetricDecisions, m.decisions)
	c.Add(disruption.MetricDisrupted, m.disrupted)
	c.Add(interruption.MetricReceived, m.received)
	c.Add(disruption.MetricRepaired, m.repaired)
}
