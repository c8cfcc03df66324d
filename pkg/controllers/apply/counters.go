package apply

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Counters are the counter vectors effects.Metric names and the
// histograms effects.Observe names, by metric name. The controller
// package that owns a metric registers it with Prometheus and adds it
// here; the applier only looks it up.
type Counters struct {
	mu         sync.RWMutex
	vecs       map[string]*prometheus.CounterVec
	histograms map[string]prometheus.Observer
}

// NewCounters is an empty set.
func NewCounters() *Counters {
	return &Counters{vecs: map[string]*prometheus.CounterVec{}, histograms: map[string]prometheus.Observer{}}
}

// AddHistogram makes h the histogram effects.Observe{Name: name}
// records in.
func (c *Counters) AddHistogram(name string, h prometheus.Observer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.histograms[name] = h
}

func (c *Counters) observe(name string, value float64) error {
	if c == nil {
		return fmt.Errorf("no histograms to observe %s in", name)
	}
	c.mu.RLock()
	h, ok := c.histograms[name]
	c.mu.RUnlock()
	if !ok {
		return fmt.Errorf("no histogram %s", name)
	}
	h.Observe(value)
	return nil
}

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
