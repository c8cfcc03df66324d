package interruption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// A rebalance recommendation has no deadline: it is an event only,
// unless the NodePool opts into replacing (capstan.dev/rebalance:
// replace), when the NodeClaim is marked InterruptionExpected for the
// disruption engine. Marking is skipped when the condition is already
// there for this kind, or the NodeClaim is going anyway.
func TestRebalanceRecommendation(t *testing.T) {
	k := cloudprovider.RebalanceRecommendation
	report := on("a", k).received().event(evReport)
	expect := on("a", k).received().event(evExpect)
	cases := []struct {
		name  string
		claim Claim
		want  act
	}{
		{"no annotation: an event only", claim("a"), report},
		{"annotation event: an event only", claim("a", rebalance(v1.RebalanceEvent)), report},
		{"an unknown value: an event only", claim("a", rebalance("Replace")), report},
		{"the NodePool is gone: as without the annotation", claim("a", noPool), report},
		{"replace: expected", claim("a", rebalance(v1.RebalanceReplace)), expect.expect()},
		{"replace, already expected for a rebalance recommendation", claim("a", rebalance(v1.RebalanceReplace), expectedSince(k)), expect},
		{"replace, expected for another kind: marked for this one", claim("a", rebalance(v1.RebalanceReplace),
			expectedSince(cloudprovider.PreemptibleMaxLifetime)), expect.expect()},
		{"replace, the condition False for this kind: marked", claim("a", rebalance(v1.RebalanceReplace),
			expectedWith(k, metav1.ConditionFalse)), expect.expect()},
		{"replace, the NodeClaim is deleting: nothing to mark", claim("a", rebalance(v1.RebalanceReplace), deleting("")), expect},
		{"no annotation, not registered yet: the event goes on the NodeClaim", claim("a", unregistered),
			act{ProviderID: "sim://a", Kind: k, NodeClaim: "nc-a", Event: evReport, Received: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := []cloudprovider.InterruptionNotice{notice("a", k, time.Time{})}
			h := &Handler{}
			d := h.Step(ns, claims(tc.claim), now)
			if diff := cmp.Diff([]act{tc.want}, summarize(d)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if !d.WakeAt.IsZero() {
				t.Errorf("WakeAt %s, want none", d.WakeAt)
			}
			// Never forceful, whatever the NodePool says.
			for _, a := range d.Actions {
				if a.Interrupt || a.MarkUnavailable {
					t.Errorf("action %+v interrupts or marks the offering", a)
				}
			}
			// The same notice again reports nothing new; only a still
			// unmarked NodeClaim is marked again.
			again := tc.want
			again.Received, again.Event = false, ""
			var want []act
			if again.Expect {
				want = []act{again}
			}
			if diff := cmp.Diff(want, summarize(h.Step(ns, claims(tc.claim), now.Add(time.Minute)))); diff != "" {
				t.Errorf("second step: actions (-want +got):\n%s", diff)
			}
		})
	}
}

// A NodePool that opts into replacing after the recommendation was
// reported turns it into an expected interruption (a second event, one
// stage on); opting out again does not take it back.
func TestRebalanceOptInLater(t *testing.T) {
	k := cloudprovider.RebalanceRecommendation
	ns := []cloudprovider.InterruptionNotice{notice("a", k, time.Time{})}
	run(t, &Handler{}, []step{
		{"no annotation", now, ns, claims(claim("a")), []act{on("a", k).received().event(evReport)}, time.Time{}},
		{"opted in", now.Add(time.Minute), ns, claims(claim("a", rebalance(v1.RebalanceReplace))),
			[]act{on("a", k).event(evExpect).expect()}, time.Time{}},
		{"marked", now.Add(2 * time.Minute), ns, claims(claim("a", rebalance(v1.RebalanceReplace), expectedSince(k))), nil, time.Time{}},
		{"opted out", now.Add(3 * time.Minute), ns, claims(claim("a", expectedSince(k))), nil, time.Time{}},
	})
}

// A preemptible VM's 24-hour limit D: nothing before D-margin, not even
// Received (waking then), an expected interruption from
// D-margin (waking at GCP's own notice, D-30s), a forceful one from
// D-30s on. Never a short spot pool.
func TestPreemptibleMaxLifetime(t *testing.T) {
	k := cloudprovider.PreemptibleMaxLifetime
	D := now.Add(24 * time.Hour)
	var seen act // held back: no action
	expect := on("a", k).received().event(evExpect).expect()
	interrupt := on("a", k).received().event(evInterrupt).interrupt()
	cases := []struct {
		name   string
		margin time.Duration
		at     time.Time
		want   act
		wakeAt time.Time
	}{
		{"hours before", 0, D.Add(-2 * time.Hour), seen, D.Add(-DefaultPreemptibleMargin)},
		{"just before the margin", 0, D.Add(-30*time.Minute - time.Nanosecond), seen, D.Add(-30 * time.Minute)},
		{"entering the margin", 0, D.Add(-30 * time.Minute), expect, D.Add(-PreemptionNotice)},
		{"inside the margin", 0, D.Add(-10 * time.Minute), expect, D.Add(-30 * time.Second)},
		{"just before the notice", 0, D.Add(-30*time.Second - time.Nanosecond), expect, D.Add(-30 * time.Second)},
		{"at the notice", 0, D.Add(-30 * time.Second), interrupt, time.Time{}},
		{"after the notice", 0, D.Add(-5 * time.Second), interrupt, time.Time{}},
		{"past the limit", 0, D.Add(time.Minute), interrupt, time.Time{}},
		// A custom margin moves the first boundary only.
		{"2h margin: before it", 2 * time.Hour, D.Add(-2*time.Hour - time.Second), seen, D.Add(-2 * time.Hour)},
		{"2h margin: at it", 2 * time.Hour, D.Add(-2 * time.Hour), expect, D.Add(-30 * time.Second)},
		{"2h margin: where the default would wait", 2 * time.Hour, D.Add(-time.Hour), expect, D.Add(-30 * time.Second)},
		{"2h margin: at the notice", 2 * time.Hour, D.Add(-30 * time.Second), interrupt, time.Time{}},
		{"5m margin: where the default would expect", 5 * time.Minute, D.Add(-10 * time.Minute), seen, D.Add(-5 * time.Minute)},
		{"5m margin: at it", 5 * time.Minute, D.Add(-5 * time.Minute), expect, D.Add(-30 * time.Second)},
		// A margin no longer than GCP's notice leaves no expected stage:
		// the handler wakes at the notice, not at the (later) margin.
		{"10s margin: before the notice", 10 * time.Second, D.Add(-time.Minute), seen, D.Add(-30 * time.Second)},
		{"10s margin: at the notice", 10 * time.Second, D.Add(-30 * time.Second), interrupt, time.Time{}},
		// The margin is a flag (--preemptible-replacement-margin): a
		// negative one is treated the same way.
		{"negative margin: before the notice", -5 * time.Minute, D.Add(-time.Minute), seen, D.Add(-30 * time.Second)},
		{"negative margin: at the notice", -5 * time.Minute, D.Add(-30 * time.Second), interrupt, time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &Handler{Options: Options{PreemptibleMargin: tc.margin}}
			d := h.Step([]cloudprovider.InterruptionNotice{notice("a", k, D)}, claims(claim("a")), tc.at)
			want := []act{tc.want}
			if cmp.Equal(tc.want, seen) {
				want = nil
			}
			if diff := cmp.Diff(want, summarize(d)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if !d.WakeAt.Equal(tc.wakeAt) {
				t.Errorf("WakeAt %s, want %s", d.WakeAt, tc.wakeAt)
			}
		})
	}
}

// One preemptible VM through its life, the caller applying each
// decision: nothing (not even Received) until its margin, one event per
// stage, Expect until the condition is there,
// Interrupt until the NodeClaim is deleting with the deadline.
func TestPreemptibleLifecycle(t *testing.T) {
	k := cloudprovider.PreemptibleMaxLifetime
	D := now.Add(24 * time.Hour)
	ns := []cloudprovider.InterruptionNotice{notice("a", k, D)}
	expected := claims(claim("a", expectedSince(k)))
	run(t, &Handler{}, []step{
		{"first sight: held back", D.Add(-time.Hour), ns, claims(claim("a")), nil, D.Add(-30 * time.Minute)},
		{"still waiting", D.Add(-45 * time.Minute), ns, claims(claim("a")), nil, D.Add(-30 * time.Minute)},
		{"woken at the margin: received now", D.Add(-30 * time.Minute), ns, claims(claim("a")),
			[]act{on("a", k).received().event(evExpect).expect()}, D.Add(-30 * time.Second)},
		{"the condition not written yet", D.Add(-29 * time.Minute), ns, claims(claim("a")),
			[]act{on("a", k).expect()}, D.Add(-30 * time.Second)},
		{"marked, the engine has not got to it", D.Add(-20 * time.Minute), ns, expected, nil, D.Add(-30 * time.Second)},
		{"woken at the notice", D.Add(-30 * time.Second), ns, expected,
			[]act{on("a", k).event(evInterrupt).interrupt()}, time.Time{}},
		{"deleting by the limit", D.Add(-20 * time.Second), ns, claims(claim("a", expectedSince(k), deletingBy(D))), nil, time.Time{}},
	})
}

// The disruption engine replaced the VM within its margin (a graceful
// deletion, no deadline recorded): at the notice it is interrupted all
// the same, so its drain finishes by the limit.
func TestPreemptibleReplacedInTheMargin(t *testing.T) {
	k := cloudprovider.PreemptibleMaxLifetime
	D := now.Add(24 * time.Hour)
	ns := []cloudprovider.InterruptionNotice{notice("a", k, D)}
	run(t, &Handler{}, []step{
		{"in the margin", D.Add(-20 * time.Minute), ns, claims(claim("a")),
			[]act{on("a", k).received().event(evExpect).expect()}, D.Add(-30 * time.Second)},
		{"deleting: nothing to mark", D.Add(-10 * time.Minute), ns, claims(claim("a", deleting(""))), nil, D.Add(-30 * time.Second)},
		{"at the notice", D.Add(-30 * time.Second), ns, claims(claim("a", deleting(""))),
			[]act{on("a", k).event(evInterrupt).interrupt()}, time.Time{}},
	})
}
