package scaleup

import (
	"testing"
	"time"
)

func TestWindowDecide(t *testing.T) {
	w := Window{Idle: time.Second, Max: 10 * time.Second}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		first, last time.Time
		now         time.Time
		due         bool
		wait        time.Duration
	}{
		{"no batch", time.Time{}, time.Time{}, t0, false, 0},
		{"just started", t0, t0, t0, false, time.Second},
		{"idle window passed", t0, t0, t0.Add(time.Second), true, 0},
		{"events keep coming", t0, t0.Add(5 * time.Second), t0.Add(5500 * time.Millisecond), false, 500 * time.Millisecond},
		{"max window caps a busy batch", t0, t0.Add(9800 * time.Millisecond), t0.Add(9900 * time.Millisecond), false, 100 * time.Millisecond},
		{"max window reached", t0, t0.Add(9999 * time.Millisecond), t0.Add(10 * time.Second), true, 0},
	} {
		due, wait := w.Decide(tc.first, tc.last, tc.now)
		if due != tc.due || wait != tc.wait {
			t.Errorf("%s: Decide = %v, %v; want %v, %v", tc.name, due, wait, tc.due, tc.wait)
		}
	}
}
