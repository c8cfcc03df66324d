package test

import (
	"runtime"
	"testing"
	"time"
)

// A buffer held while sampling shows in the peak.
func TestSampleHeapSeesAnAllocation(t *testing.T) {
	runtime.GC()
	p := SampleHeap(time.Millisecond)
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = 1
	}
	peak := p.Stop()
	runtime.KeepAlive(buf)
	if peak < 64<<20 {
		t.Errorf("peak %d bytes, want at least the %d held", peak, 64<<20)
	}
}
