package test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// Peak polls count every 50ms until the test ends and holds the highest
// count seen so far: e2e scenarios assert that something (instances in a
// reservation, NodeClaims) never went over a bound at any moment, not
// only at the end.
func Peak(t testing.TB, count func(context.Context) int) *atomic.Int64 {
	most := &atomic.Int64{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			if n := int64(count(ctx)); n > most.Load() {
				most.Store(n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return most
}
