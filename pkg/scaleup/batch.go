package scaleup

import "time"

// Batch is the provisioner's batch state, kept by the controller and by
// simulate alike: a batch opened by the first pending pod's event and
// closed by the Window; an immediate re-plan after a failed launch; and a
// re-check, a Window.Max after a decision left pods waiting, so that no
// pod waits on a lost event. The zero value has no batch open.
type Batch struct {
	first, last time.Time
	immediate   bool
	recheck     time.Time
}

// Trigger records an event at now: a pod to provision for, a deleting
// node, a NodePool change; immediate when its pods must find other
// capacity now, not a window later (a launch failed).
func (b *Batch) Trigger(now time.Time, immediate bool) {
	if b.first.IsZero() {
		b.first = now
	}
	b.last = now
	b.immediate = b.immediate || immediate
}

// Due reports whether a solve runs now, and if so closes the batch; if
// not, wait is how long until it may (0: nothing is open).
func (b *Batch) Due(w Window, now time.Time) (due bool, wait time.Duration) {
	if b.first.IsZero() && !b.recheck.IsZero() && !now.Before(b.recheck) {
		b.first, b.last = now.Add(-w.Idle), now.Add(-w.Idle)
	}
	due, wait = w.Decide(b.first, b.last, now)
	if b.immediate && !b.first.IsZero() {
		due, wait = true, 0
	}
	if due {
		*b = Batch{}
		return true, 0
	}
	if b.first.IsZero() && !b.recheck.IsZero() {
		wait = b.recheck.Sub(now)
	}
	return false, wait
}

// Next is when the open batch closes, or the re-check is due.
func (b *Batch) Next(w Window, now time.Time) (time.Time, bool) {
	if !b.first.IsZero() {
		_, wait := w.Decide(b.first, b.last, now)
		return now.Add(wait), true
	}
	return b.recheck, !b.recheck.IsZero()
}

// Solved records the decision made at now: pods it left waiting
// (unplaced, planned onto NodeClaims it created or nominated to capacity
// not up yet, or without their llmaz flavors) are solved again a
// Window.Max later even if nothing changes, so a NodeClaim deleted before
// its node registered (expired, say) has its pods planned again. Virtual
// pods are solved again too: a real pod bound onto the capacity a
// buffer kept warm raises no event the provisioner watches, and the
// buffer is refilled by the next solve.
func (b *Batch) Solved(d Decision, w Window, now time.Time) {
	if len(d.Result.Unplaced) > 0 || len(d.Result.NewNodeClaims) > 0 || len(d.Result.Nominations) > 0 || len(d.FlavorFailures) > 0 || d.Virtual.Count > 0 {
		b.recheck = now.Add(w.Max)
	}
}
