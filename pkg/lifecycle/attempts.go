package lifecycle

import (
	"sync"

	"github.com/capstan-dev/capstan/pkg/effects"
)

// Attempts keeps the failed launches of NodeClaims not launched yet, by
// name: the backoff Next waits out between launches. The shell that runs
// the lifecycle reads them for Next and its applier writes them
// (effects.SetLaunchAttempts). Kept apart from the work queue's rate
// limiter so the reconcile a Launched=False update triggers waits too,
// and `capstan simulate`, which has no work queue, retries at the same
// times.
type Attempts struct {
	mu     sync.Mutex
	byName map[string]LaunchAttempts
}

// NewAttempts is an empty store.
func NewAttempts() *Attempts { return &Attempts{byName: map[string]LaunchAttempts{}} }

// Get is the NodeClaim's failed launches; none when unknown.
func (a *Attempts) Get(name string) LaunchAttempts {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byName[name]
}

// Set keeps the attempts an effect records, forgetting them when none
// failed.
func (a *Attempts) Set(e effects.SetLaunchAttempts) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e.Failures <= 0 {
		delete(a.byName, e.NodeClaim)
		return
	}
	a.byName[e.NodeClaim] = LaunchAttempts{Failures: e.Failures, Last: e.Last}
}

// Forget drops a NodeClaim's attempts (it is gone).
func (a *Attempts) Forget(name string) { a.Set(effects.SetLaunchAttempts{NodeClaim: name}) }
