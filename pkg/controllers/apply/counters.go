package apply

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Counters are the counter vectors effects.Metric names, by metric name.
// The controller package that owns a metric registers its vector with
// Prometheus and adds it here; the applier only looks it up.
type Counters struct {
	mu   sync.RWMutex
	vecs map[string]*prometheus.CounterVec
}

// NewCounters is an empty set.
func NewCounters() *Counters { return &Counters{vecs: map[string]*prometheus.CounterVec{}} }

// Add makes vec the counter effects.Metric{Name: name} adds to.
func (c *Counters) Add(name string, vec *prometheus.CounterVec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.vecs[name] = vec
}

func (c *Counters) add(name string, labels []string, value float64) error {
	if c == nil {
		return fmt.Errorf("no counters to add %s to", name)
	}
	c.mu.RLock()
	vec, ok := c.vecs[name]
	c.mu.RUnlock()
	if !ok {
		return fmt.Errorf("no counter %s", name)
	}
	counter, err := vec.GetMetricWithLabelValues(labels...)
	if err != nil {
		return fmt.Errorf("counting %s, %w", name, err)
	}
	counter.Add(value)
	return nil
}
