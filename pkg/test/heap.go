package test

import (
	"runtime/metrics"
	"time"
)

// heapMetric is the live and not-yet-swept heap: what the process's
// memory follows.
const heapMetric = "/memory/classes/heap/objects:bytes"

// HeapSampler samples the heap in the background until stopped: the
// growth benchmarks report its peak beside their time
// (docs/simulate.md, "Scale").
type HeapSampler struct {
	stop chan struct{}
	done chan uint64
}

// SampleHeap starts sampling every interval.
func SampleHeap(interval time.Duration) *HeapSampler {
	p := &HeapSampler{stop: make(chan struct{}), done: make(chan uint64)}
	go func() {
		sample := []metrics.Sample{{Name: heapMetric}}
		var peak uint64
		read := func() {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
		}
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			read()
			select {
			case <-p.stop:
				read()
				p.done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// Stop ends sampling and returns the largest heap seen, in bytes.
func (p *HeapSampler) Stop() uint64 {
	close(p.stop)
	return <-p.done
}
