package scaleup

import "time"

// Window batches pod events: a batch closes once no event came for Idle,
// or Max after its first event, whichever comes first.
type Window struct {
	Idle, Max time.Duration
}

// The default window, the reference's batch idle and max durations; the
// controller's flags and simulate both start from it.
const (
	DefaultBatchIdle = time.Second
	DefaultBatchMax  = 10 * time.Second
)

// Decide says whether the batch that started at first, with its latest
// event at last, is due at now; if not, how long to wait. A zero first
// means there is no batch.
func (w Window) Decide(first, last, now time.Time) (due bool, wait time.Duration) {
	if first.IsZero() {
		return false, 0
	}
	idleAt, maxAt := last.Add(w.Idle), first.Add(w.Max)
	closeAt := idleAt
	if maxAt.Before(closeAt) {
		closeAt = maxAt
	}
	if !now.Before(closeAt) {
		return true, 0
	}
	return false, closeAt.Sub(now)
}
