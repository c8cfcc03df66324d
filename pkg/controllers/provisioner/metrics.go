package provisioner

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// Metrics are the provisioner's Prometheus metrics.
type Metrics struct {
	schedulingDuration prometheus.Histogram
	pendingPods        prometheus.Gauge
	unplacedPods       *prometheus.GaugeVec
	nodeClaimsCreated  *prometheus.CounterVec
}

// NewMetrics registers the provisioner's metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := newMetrics()
	for _, c := range []prometheus.Collector{m.schedulingDuration, m.pendingPods, m.unplacedPods, m.nodeClaimsCreated} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// newMetrics are the provisioner's metrics, registered nowhere.
func newMetrics() *Metrics {
	return &Metrics{
		schedulingDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "capstan_provisioner_scheduling_duration_seconds", Help: "Time one solve of the pending pods took.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
		pendingPods: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "capstan_provisioner_pending_pods", Help: "Pending pods in the last solve.",
		}),
		unplacedPods: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "capstan_provisioner_unplaced_pods", Help: "Pods the last solve could not place, by reason.",
		}, []string{"reason"}),
		nodeClaimsCreated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: scaleup.MetricNodeClaimsCreated, Help: "NodeClaims the provisioner created, by NodePool and planned capacity type.",
		}, []string{"nodepool", "capacity_type"}),
	}
}

// Counters makes c count the NodeClaims created through it (a static
// NodePool's replicas are counted with the provisioner's).
func (m *Metrics) Counters(c *apply.Counters) {
	c.Add(scaleup.MetricNodeClaimsCreated, m.nodeClaimsCreated)
}
