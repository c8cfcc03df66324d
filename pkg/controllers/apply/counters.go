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
	h, err := lookup(c, func(c *Counters) map[string]prometheus.Observer { return c.histograms }, name)
	if err != nil {
		return err
	}
	h.Observe(value)
	return nil
}

// lookup finds the metric name in the map of c that in picks.
func lookup[T any](c *Counters, in func(*Counters) map[string]T, name string) (T, error) {
	var zero T
	if c == nil {
		return zero, fmt.Errorf("no metrics to record %s in", name)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	m, ok := in(c)[name]
	if !ok {
		return zero, fmt.Errorf("no metric %s", name)
	}
	return m, nil
}

// Add makes vec the counter effects.Metric{Name: name} adds to.
func (c *Counters) Add(name string, vec *prometheus.CounterVec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.vecs[name] = vec
}

func (c *Counters) add(name string, labels []string, value float64) error {
	vec, err := lookup(c, func(c *Counters) map[string]*prometheus.CounterVec { return c.vecs }, name)
	if err != nil {
		return err
	}
	counter, err := vec.GetMetricWithLabelValues(labels...)
	if err != nil {
		return fmt.Errorf("counting %s, %w", name, err)
	}
	counter.Add(value)
	return nil
}
