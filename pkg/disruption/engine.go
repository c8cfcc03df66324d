package disruption

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/effects"
)

// DefaultEventInterval is how often the same verdict is reported for the
// same node at most, so a blocked node is not spammed.
const DefaultEventInterval = 5 * time.Minute

// Engine is disruption's driver, the same for the controller and
// simulate: at most one command in flight; while none is, it plans. It
// keeps state between ticks but does no I/O: callers observe, tick and
// apply the actions.
type Engine struct {
	Options Options
	// EventInterval rate-limits verdicts per node and message.
	EventInterval time.Duration

	active   *Orchestration
	reported map[string]time.Time
	// settled is the settledKey of the last pass in which consolidation
	// found nothing; while the cluster still has that key, consolidation
	// is not run again.
	settled string
	// settledWake is when that pass's verdicts change by time alone (a
	// do-not-disrupt duration ending): the key changes then, and a caller
	// that ticks only when woken (simulate) must still plan.
	settledWake time.Time
	// started is the first tick (Options.HistoryFromFirstTick).
	started time.Time
}

// NewEngine is the engine the controller and simulate run, verdicts
// rate-limited by DefaultEventInterval.
func NewEngine(opts Options) *Engine {
	return &Engine{Options: opts, EventInterval: DefaultEventInterval}
}

// Tick is what one tick decided.
type Tick struct {
	// Actions to apply, in order.
	Actions []Action
	// Stale are nodes to un-taint: tainted for a command no longer in
	// flight.
	Stale []*corev1.Node
	// Planned is set when the tick planned: what the methods found.
	Planned *Decision
	// Started is a command just decided; it will be validated first.
	Started *Command
	// Finished is a command that ended this tick: its candidates deleted,
	// or abandoned (Abandoned says why).
	Finished  *Command
	Abandoned string
	// Annotate are annotations to set on NodeClaims, by name: a failed
	// return to preferred capacity backs off (ReturnBackoff).
	Annotate map[string]map[string]string
	// Verdicts to report now (rate-limited).
	Verdicts []Verdict
	// WakeAt is when to tick again at the latest (zero: the caller's
	// polling interval).
	WakeAt time.Time
	// Effects are the tick's changes for an applier, in order: stale
	// taints off, verdicts reported, the actions, the annotations, the
	// abandonment reported.
	Effects []effects.Effect
}

// Active is the command in flight, if any.
func (e *Engine) Active() (Orchestration, bool) {
	if e.active == nil {
		return Orchestration{}, false
	}
	return *e.active, true
}

// Replacements name the NodeClaims the caller must observe for the next
// tick.
func (e *Engine) Replacements() []string {
	if e.active == nil {
		return nil
	}
	return e.active.Replacements
}

// Tick moves the command in flight on, or plans a new one.
func (e *Engine) Tick(in Input, replacements map[string]ReplacementStatus, now time.Time) (Tick, error) {
	if e.started.IsZero() {
		e.started = now
	}
	if e.Options.HistoryFromFirstTick && in.Unavailable.Since.Before(e.started) {
		in.Unavailable.Since = e.started
	}
	t, err := e.tick(in, replacements, now)
	if err != nil {
		return t, err
	}
	var cmd Command
	if e.active != nil {
		cmd = e.active.Command
	}
	if t.Finished != nil {
		cmd = *t.Finished
	}
	t.Effects = tickEffects(in, t, cmd, now)
	return t, nil
}

func (e *Engine) tick(in Input, replacements map[string]ReplacementStatus, now time.Time) (Tick, error) {
	if e.active != nil {
		res, err := e.Options.Step(*e.active, Observation{Input: in, Replacements: replacements}, now)
		if err != nil {
			e.active = nil
			return Tick{}, err
		}
		t := Tick{Actions: res.Actions, WakeAt: res.WakeAt}
		if res.Done {
			cmd := res.Next.Command
			t.Finished, t.Abandoned, e.active = &cmd, res.Abandoned, nil
			if m, ok := methodNamed(e.Options.Methods, cmd.Method); ok && res.ReplacementFailed {
				if b, ok := m.(BackingOff); ok {
					t.Annotate = map[string]map[string]string{}
					for _, c := range cmd.Candidates {
						t.Annotate[c.NodeClaim.Name] = b.Backoff(c, now)
					}
				}
			}
			return t, nil
		}
		e.active = &res.Next
		return t, nil
	}
	t := Tick{Stale: StaleTaints(in, nil)}
	candidates := Candidates(in, now)
	methods, key := e.Options.Methods, settledKey(in, candidates, e.Options.Methods, now)
	if key == e.settled {
		methods = slices.DeleteFunc(slices.Clone(methods), consolidates)
	}
	d := plan(in, candidates, methods, now)
	switch {
	case d.Found:
		e.settled = ""
	case len(methods) == len(e.Options.Methods):
		e.settled, e.settledWake = key, d.WakeAt
	default:
		d.WakeAt = earliestAfter(now, d.WakeAt, e.settledWake)
	}
	t.Planned = &d
	t.Verdicts = e.fresh(d.Verdicts, now)
	if d.Found {
		o := Start(d.Command, now)
		e.active = &o
		t.Started = &d.Command
		t.WakeAt = now.Add(e.Options.ValidationDelay)
	} else {
		t.WakeAt = d.WakeAt
		if at := Unsettles(in.Unavailable, now); !at.IsZero() && (t.WakeAt.IsZero() || at.Before(t.WakeAt)) {
			t.WakeAt = at
		}
	}
	return t, nil
}

// earliestAfter is the earliest of ts after now; zero when none is.
func earliestAfter(now time.Time, ts ...time.Time) time.Time {
	var at time.Time
	for _, t := range ts {
		if t.After(now) && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	return at
}

// consolidates reports a Settling method, worth skipping while the
// cluster is settled.
func consolidates(m Method) bool {
	_, ok := m.(Settling)
	return ok
}

// fresh are the verdicts not reported within the interval.
func (e *Engine) fresh(verdicts []Verdict, now time.Time) []Verdict {
	if e.reported == nil {
		e.reported = map[string]time.Time{}
	}
	for k, at := range e.reported {
		if now.Sub(at) >= e.EventInterval {
			delete(e.reported, k)
		}
	}
	var out []Verdict
	for _, v := range verdicts {
		key := v.NodeClaim + "\x00" + v.Event + "\x00" + v.Message
		if _, seen := e.reported[key]; seen {
			continue
		}
		e.reported[key] = now
		out = append(out, v)
	}
	return out
}
