package interruption

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// now is the fixed instant every Step runs at unless a case says
// otherwise; nothing here reads the wall clock.
var now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// forceful are the kinds that interrupt at once, whatever the NodePool.
var forceful = []cloudprovider.InterruptionKind{
	cloudprovider.SpotInterruption, cloudprovider.ScheduledChange, cloudprovider.InstanceStopping,
	cloudprovider.InstanceTerminating, cloudprovider.SpotPriceAboveMax, cloudprovider.AzureEviction,
	cloudprovider.CapacityReservationInterruption, cloudprovider.InstanceUnhealthy,
}

// The stages an action's Event reports, as the summary names them.
const (
	evInterrupt = "interrupt" // "...; draining it now and launching replacements"
	evExpect    = "expect"    // "...; replacing it ahead of time within the Drifted budget"
	evReport    = "report"    // "...; no action (...)"
)

// act is an Action as the tables spell it: the notice by provider id and
// kind, the event by the stage it reports.
type act struct {
	ProviderID string
	Kind       cloudprovider.InterruptionKind
	NodeClaim  string
	Node       string
	Event      string
	Received   bool
	Unavail    bool
	Interrupt  bool
	Expect     bool
}

func summarize(d Decision) []act {
	var out []act
	for _, a := range d.Actions {
		out = append(out, act{
			ProviderID: a.Notice.ProviderID, Kind: a.Notice.Kind, NodeClaim: a.NodeClaim, Node: a.Node,
			Event: eventStage(a.Event), Received: a.Received, Unavail: a.MarkUnavailable, Interrupt: a.Interrupt, Expect: a.Expect,
		})
	}
	return out
}

func eventStage(e string) string {
	switch {
	case e == "":
		return ""
	case strings.HasSuffix(e, "; draining it now and launching replacements"):
		return evInterrupt
	case strings.HasSuffix(e, "; replacing it ahead of time within the Drifted budget"):
		return evExpect
	case strings.Contains(e, "; no action ("):
		return evReport
	}
	return "unrecognised event: " + e
}

// on is the act for node n's NodeClaim ("nc-"+n, provider id "sim://"+n)
// about a notice of kind k; the caller sets the flags.
func on(n string, k cloudprovider.InterruptionKind) act {
	return act{ProviderID: "sim://" + n, Kind: k, NodeClaim: "nc-" + n, Node: n}
}

func (a act) event(stage string) act { a.Event = stage; return a }
func (a act) received() act          { a.Received = true; return a }
func (a act) unavail() act           { a.Unavail = true; return a }
func (a act) interrupt() act         { a.Interrupt = true; return a }
func (a act) expect() act            { a.Expect = true; return a }

func notice(n string, k cloudprovider.InterruptionKind, deadline time.Time) cloudprovider.InterruptionNotice {
	return cloudprovider.InterruptionNotice{Kind: k, ProviderID: "sim://" + n, InstanceType: "m5.large", Zone: "zone-a",
		Deadline: deadline, Message: "the cloud says " + string(k)}
}

// claim is node n's registered NodeClaim in NodePool "default" (no
// annotations).
func claim(n string, mods ...func(*Claim)) Claim {
	c := Claim{
		NodeClaim: &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nc-" + n},
			Status: v1.NodeClaimStatus{NodeName: n, ProviderID: "sim://" + n}},
		NodePool: &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
	}
	for _, m := range mods {
		m(&c)
	}
	return c
}

func claims(cs ...Claim) map[string]Claim {
	out := map[string]Claim{}
	for _, c := range cs {
		out[c.NodeClaim.Status.ProviderID] = c
	}
	return out
}

// deleting marks the NodeClaim deleted at now; annotation, when not "",
// is its termination-timestamp annotation.
func deleting(annotation string) func(*Claim) {
	return func(c *Claim) {
		c.NodeClaim.DeletionTimestamp = &metav1.Time{Time: now}
		if annotation != "" {
			c.NodeClaim.Annotations = map[string]string{v1.NodeClaimTerminationTimestampAnnotationKey: annotation}
		}
	}
}

// deletingBy is deleting with the annotation MarkForceful writes for t.
func deletingBy(t time.Time) func(*Claim) { return deleting(t.UTC().Format(time.RFC3339)) }

func rebalance(value string) func(*Claim) {
	return func(c *Claim) { c.NodePool.Annotations = map[string]string{v1.RebalanceAnnotationKey: value} }
}

func noPool(c *Claim) { c.NodePool = nil }

// expectedSince gives the NodeClaim the InterruptionExpected condition
// with status True and reason k.
func expectedSince(k cloudprovider.InterruptionKind) func(*Claim) {
	return expectedWith(k, metav1.ConditionTrue)
}

func expectedWith(k cloudprovider.InterruptionKind, status metav1.ConditionStatus) func(*Claim) {
	return func(c *Claim) {
		c.NodeClaim.Status.Conditions = append(c.NodeClaim.Status.Conditions, metav1.Condition{
			Type: v1.ConditionTypeInterruptionExpected, Status: status, Reason: string(k), LastTransitionTime: metav1.NewTime(now)})
	}
}

func unregistered(c *Claim) { c.NodeClaim.Status.NodeName = "" }

// step is one Step of a sequence: the world the handler sees then, and
// what it should decide.
type step struct {
	name    string
	at      time.Time
	notices []cloudprovider.InterruptionNotice
	claims  map[string]Claim
	want    []act
	wakeAt  time.Time
}

// run drives one Handler through steps in order.
func run(t *testing.T, h *Handler, steps []step) {
	t.Helper()
	for i, s := range steps {
		d := h.Step(s.notices, s.claims, s.at)
		if diff := cmp.Diff(s.want, summarize(d)); diff != "" {
			t.Errorf("step %d (%s): actions (-want +got):\n%s", i, s.name, diff)
		}
		if !d.WakeAt.Equal(s.wakeAt) {
			t.Errorf("step %d (%s): WakeAt %s, want %s", i, s.name, d.WakeAt, s.wakeAt)
		}
	}
}

// A notice with a deadline interrupts the node at once: one event, the
// offering marked unavailable only when the notice says the spot pool is
// short (and only once), and Interrupt repeated for as long as the
// caller has not deleted the NodeClaim (a reconciler that failed half way
// tries again), then not once it is deleting with that deadline.
func TestForcefulKinds(t *testing.T) {
	deadline := now.Add(2 * time.Minute)
	for _, k := range forceful {
		t.Run(string(k), func(t *testing.T) {
			spotShort := k == cloudprovider.SpotInterruption || k == cloudprovider.AzureEviction
			first := on("a", k).received().event(evInterrupt).interrupt()
			if spotShort {
				first = first.unavail()
			}
			ns := []cloudprovider.InterruptionNotice{notice("a", k, deadline)}
			run(t, &Handler{}, []step{
				{"first sight", now, ns, claims(claim("a")), []act{first}, time.Time{}},
				{"again, not yet deleted", now.Add(time.Second), ns, claims(claim("a")),
					[]act{on("a", k).interrupt()}, time.Time{}},
				{"deleting with the notice's deadline", now.Add(2 * time.Second), ns, claims(claim("a", deletingBy(deadline))),
					nil, time.Time{}},
				{"still repeated", now.Add(3 * time.Second), ns, claims(claim("a", deletingBy(deadline))),
					nil, time.Time{}},
			})
		})
	}
}

// A NodeClaim already being deleted (by consolidation, drift, or an
// earlier notice) is interrupted again only when the notice's deadline
// is earlier than the one it carries: its drain must finish sooner. The
// notice is still reported, and a short spot pool still marked.
func TestAlreadyDeleting(t *testing.T) {
	deadline := now.Add(2 * time.Minute)
	cases := []struct {
		name     string
		kind     cloudprovider.InterruptionKind
		deadline time.Time
		claim    Claim
		want     act
	}{
		{"deleting without a deadline: the notice gives it one", cloudprovider.ScheduledChange, deadline,
			claim("a", deleting("")), on("a", cloudprovider.ScheduledChange).received().event(evInterrupt).interrupt()},
		{"a later recorded deadline: interrupted again", cloudprovider.ScheduledChange, deadline,
			claim("a", deletingBy(deadline.Add(time.Hour))), on("a", cloudprovider.ScheduledChange).received().event(evInterrupt).interrupt()},
		{"a recorded deadline one second later", cloudprovider.ScheduledChange, deadline,
			claim("a", deletingBy(deadline.Add(time.Second))), on("a", cloudprovider.ScheduledChange).received().event(evInterrupt).interrupt()},
		{"the same recorded deadline: not again", cloudprovider.ScheduledChange, deadline,
			claim("a", deletingBy(deadline)), on("a", cloudprovider.ScheduledChange).received().event(evInterrupt)},
		{"an earlier recorded deadline: not again", cloudprovider.ScheduledChange, deadline,
			claim("a", deletingBy(deadline.Add(-time.Minute))), on("a", cloudprovider.ScheduledChange).received().event(evInterrupt)},
		// The annotation holds whole seconds (RFC 3339): a notice whose
		// deadline has a fraction is the same deadline.
		{"the same deadline but for a fraction of a second", cloudprovider.ScheduledChange, deadline.Add(400 * time.Millisecond),
			claim("a", deletingBy(deadline)), on("a", cloudprovider.ScheduledChange).received().event(evInterrupt)},
		{"a recorded deadline in another zone, the same instant", cloudprovider.ScheduledChange, deadline,
			claim("a", deleting(deadline.In(time.FixedZone("UTC+2", 2*3600)).Format(time.RFC3339))),
			on("a", cloudprovider.ScheduledChange).received().event(evInterrupt)},
		{"an unparsable recorded deadline is replaced", cloudprovider.ScheduledChange, deadline,
			claim("a", deleting("soon")), on("a", cloudprovider.ScheduledChange).received().event(evInterrupt).interrupt()},
		{"a notice without a deadline cannot shorten anything", cloudprovider.InstanceStopping, time.Time{},
			claim("a", deleting("")), on("a", cloudprovider.InstanceStopping).received().event(evInterrupt)},
		{"a notice without a deadline on a live NodeClaim still interrupts", cloudprovider.InstanceStopping, time.Time{},
			claim("a"), on("a", cloudprovider.InstanceStopping).received().event(evInterrupt).interrupt()},
		{"a short spot pool is marked though the NodeClaim goes sooner anyway", cloudprovider.SpotInterruption, deadline,
			claim("a", deletingBy(deadline.Add(-time.Minute))), on("a", cloudprovider.SpotInterruption).received().event(evInterrupt).unavail()},
		{"an earlier spot deadline: interrupted again and marked", cloudprovider.AzureEviction, deadline,
			claim("a", deletingBy(deadline.Add(time.Minute))), on("a", cloudprovider.AzureEviction).received().event(evInterrupt).unavail().interrupt()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &Handler{}
			d := h.Step([]cloudprovider.InterruptionNotice{notice("a", tc.kind, tc.deadline)}, claims(tc.claim), now)
			if diff := cmp.Diff([]act{tc.want}, summarize(d)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if !d.WakeAt.IsZero() {
				t.Errorf("WakeAt %s, want none", d.WakeAt)
			}
		})
	}
}

// A deadline moved earlier after the NodeClaim was interrupted (the
// cloud revised its notice): Interrupt again with the new deadline, but
// no second event and no second mark.
func TestRevisedDeadline(t *testing.T) {
	first, revised := now.Add(10*time.Minute), now.Add(2*time.Minute)
	k := cloudprovider.SpotInterruption
	run(t, &Handler{}, []step{
		{"first notice", now, []cloudprovider.InterruptionNotice{notice("a", k, first)}, claims(claim("a")),
			[]act{on("a", k).received().event(evInterrupt).unavail().interrupt()}, time.Time{}},
		{"deleting by it", now.Add(time.Second), []cloudprovider.InterruptionNotice{notice("a", k, first)}, claims(claim("a", deletingBy(first))),
			nil, time.Time{}},
		{"revised earlier", now.Add(2 * time.Second), []cloudprovider.InterruptionNotice{notice("a", k, revised)}, claims(claim("a", deletingBy(first))),
			[]act{on("a", k).interrupt()}, time.Time{}},
		{"deleting by the revised one", now.Add(3 * time.Second), []cloudprovider.InterruptionNotice{notice("a", k, revised)}, claims(claim("a", deletingBy(revised))),
			nil, time.Time{}},
		{"revised later again: the earlier one stands", now.Add(4 * time.Second), []cloudprovider.InterruptionNotice{notice("a", k, first)}, claims(claim("a", deletingBy(revised))),
			nil, time.Time{}},
	})
}

// WakeAt is the earliest instant any notice needs action; notices acted
// on now or already past their last stage do not wake the handler.
func TestWakeAtIsTheEarliest(t *testing.T) {
	k := cloudprovider.PreemptibleMaxLifetime
	ns := []cloudprovider.InterruptionNotice{
		notice("a", k, now.Add(3*time.Hour)),    // wakes at +2h30m
		notice("b", k, now.Add(10*time.Minute)), // in its margin: wakes at +9m30s
		notice("c", k, now.Add(90*time.Minute)), // wakes at +1h
		notice("d", cloudprovider.SpotInterruption, now.Add(2*time.Minute)),
		notice("e", k, now.Add(time.Minute)), // unowned: no wake
	}
	d := (&Handler{}).Step(ns, claims(claim("a"), claim("b"), claim("c"), claim("d")), now)
	if want := now.Add(10*time.Minute - 30*time.Second); !d.WakeAt.Equal(want) {
		t.Errorf("WakeAt %s, want %s", d.WakeAt, want)
	}
	want := []act{
		on("b", k).received().event(evExpect).expect(),
		on("d", cloudprovider.SpotInterruption).received().event(evInterrupt).unavail().interrupt(),
	}
	if diff := cmp.Diff(want, summarize(d)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

// Notices about instances no NodeClaim owns are garbage collection's: no
// action and no memory of them, so the NodeClaim that turns up for one
// later gets it reported in full.
func TestUnowned(t *testing.T) {
	k := cloudprovider.SpotInterruption
	ns := []cloudprovider.InterruptionNotice{notice("x", k, now.Add(2*time.Minute))}
	run(t, &Handler{}, []step{
		{"no NodeClaim at all", now, ns, nil, nil, time.Time{}},
		{"another instance's NodeClaim", now.Add(time.Second), ns, claims(claim("a")), nil, time.Time{}},
		{"its NodeClaim shows up", now.Add(2 * time.Second), ns, claims(claim("a"), claim("x")),
			[]act{on("x", k).received().event(evInterrupt).unavail().interrupt()}, time.Time{}},
	})
}

// The handler forgets a notice once the cloud stops returning it (its
// instance is gone): if it ever comes back it is reported again. A
// notice still returned is not re-reported because another went away,
// and the same instance's notices of different kinds are independent.
func TestForgetsVanishedNotices(t *testing.T) {
	spot, rebal := cloudprovider.SpotInterruption, cloudprovider.RebalanceRecommendation
	a := notice("a", spot, now.Add(2*time.Minute))
	b := notice("b", spot, now.Add(2*time.Minute))
	aRebal := notice("a", rebal, time.Time{})
	cs := claims(claim("a"), claim("b"))
	full := func(n string) act { return on(n, spot).received().event(evInterrupt).unavail().interrupt() }
	run(t, &Handler{}, []step{
		{"a's rebalance recommendation", now, []cloudprovider.InterruptionNotice{aRebal}, cs,
			[]act{on("a", rebal).received().event(evReport)}, time.Time{}},
		{"then a's and b's interruptions", now.Add(time.Second), []cloudprovider.InterruptionNotice{aRebal, a, b}, cs,
			[]act{full("a"), full("b")}, time.Time{}},
		{"a's go away", now.Add(2 * time.Second), []cloudprovider.InterruptionNotice{b}, cs,
			[]act{on("b", spot).interrupt()}, time.Time{}},
		{"a's come back", now.Add(3 * time.Second), []cloudprovider.InterruptionNotice{a, b, aRebal}, cs,
			[]act{full("a"), on("b", spot).interrupt(), on("a", rebal).received().event(evReport)}, time.Time{}},
		{"no notices at all", now.Add(4 * time.Second), nil, cs, nil, time.Time{}},
		{"b's again", now.Add(5 * time.Second), []cloudprovider.InterruptionNotice{b}, cs, []act{full("b")}, time.Time{}},
	})
}

// The Action carries the notice as the cloud gave it (the caller marks
// the offering from its instance type and zone, and records its
// deadline), the NodeClaim's name and its node's.
func TestActionCarriesTheNotice(t *testing.T) {
	n := notice("a", cloudprovider.AzureEviction, now.Add(30*time.Second))
	d := (&Handler{}).Step([]cloudprovider.InterruptionNotice{n}, claims(claim("a")), now)
	if len(d.Actions) != 1 {
		t.Fatalf("%d actions, want 1", len(d.Actions))
	}
	got := d.Actions[0]
	got.Event = ""
	want := Action{Notice: n, NodeClaim: "nc-a", Node: "a", Received: true, MarkUnavailable: true, Interrupt: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("action (-want +got):\n%s", diff)
	}
}

// The events' words: the cloud's message (the kind when it gave none),
// the deadline in UTC and how far off it is, and what Capstan does.
func TestEventMessages(t *testing.T) {
	D := now.Add(24 * time.Hour)
	cases := []struct {
		name  string
		n     cloudprovider.InterruptionNotice
		claim Claim
		at    time.Time
		want  string
	}{
		{"an interruption", notice("a", cloudprovider.SpotInterruption, now.Add(2*time.Minute)), claim("a"), now,
			"the cloud says SpotInterruption: the instance goes at 2026-03-10T12:02:00Z (in 2m0s); draining it now and launching replacements"},
		{"no message: the kind", cloudprovider.InterruptionNotice{Kind: cloudprovider.ScheduledChange, ProviderID: "sim://a",
			Deadline: now.Add(90 * time.Minute).In(time.FixedZone("UTC-5", -5*3600))}, claim("a"), now,
			"ScheduledChange: the instance goes at 2026-03-10T13:30:00Z (in 1h30m0s); draining it now and launching replacements"},
		{"a fraction of a second is rounded", notice("a", cloudprovider.SpotInterruption, now.Add(2*time.Minute+600*time.Millisecond)), claim("a"), now,
			"the cloud says SpotInterruption: the instance goes at 2026-03-10T12:02:00Z (in 2m1s); draining it now and launching replacements"},
		{"a deadline already due", cloudprovider.InterruptionNotice{Kind: cloudprovider.InstanceUnhealthy, ProviderID: "sim://a", Deadline: now.Add(-time.Minute),
			Message: "EC2 status checks: system status reachability failed since 2026-03-10T11:57:00Z"}, claim("a"), now,
			"EC2 status checks: system status reachability failed since 2026-03-10T11:57:00Z: the instance goes now (due at 2026-03-10T11:59:00Z); draining it now and launching replacements"},
		{"no deadline", cloudprovider.InterruptionNotice{Kind: cloudprovider.InstanceStopping, ProviderID: "sim://a"}, claim("a"), now,
			"InstanceStopping: the instance goes; draining it now and launching replacements"},
		{"an expected interruption", notice("a", cloudprovider.PreemptibleMaxLifetime, D), claim("a"), D.Add(-20 * time.Minute),
			"the cloud says PreemptibleMaxLifetime: the instance goes at 2026-03-11T12:00:00Z (in 20m0s); replacing it ahead of time within the Drifted budget"},
		{"an opted-in rebalance recommendation", notice("a", cloudprovider.RebalanceRecommendation, time.Time{}), claim("a", rebalance(v1.RebalanceReplace)), now,
			"the cloud says RebalanceRecommendation: the instance is at risk; replacing it ahead of time within the Drifted budget"},
		{"a rebalance recommendation only reported", notice("a", cloudprovider.RebalanceRecommendation, time.Time{}), claim("a"), now,
			"the cloud says RebalanceRecommendation; no action (the NodePool does not opt into replacing on rebalance recommendations)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := (&Handler{}).Step([]cloudprovider.InterruptionNotice{tc.n}, claims(tc.claim), tc.at)
			if len(d.Actions) != 1 {
				t.Fatalf("%d actions, want 1", len(d.Actions))
			}
			if got := d.Actions[0].Event; got != tc.want {
				t.Errorf("event\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
