package test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestPeakHoldsTheHighestCount(t *testing.T) {
	var n atomic.Int64
	most := Peak(t, func(context.Context) int { return int(n.Load()) })
	for _, v := range []int64{1, 5, 2} {
		n.Store(v)
		deadline := time.Now().Add(5 * time.Second)
		for most.Load() < v && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if got := most.Load(); got != 5 {
		t.Errorf("peak %d, want 5 (the highest count, kept after it fell to 2)", got)
	}
}
