package disruption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
)

var disrupted = []corev1.Taint{v1.DisruptedNoScheduleTaint()}

// An empty node's command, validated at once: tainted with its reason
// recorded, deleted, reported and counted, in that order.
func TestTickEffectsOfACommand(t *testing.T) {
	c := newCluster("a")
	c.snapshot(m5...)
	e := NewEngine(Options{Methods: []Method{Emptiness{}}})
	if tick, err := e.Tick(c.in, nil, t0); err != nil || tick.Started == nil {
		t.Fatalf("first tick %+v %v, want a command started", tick, err)
	}
	tick, err := e.Tick(c.in, nil, t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NewTime(t0.Add(time.Second))
	want := []effects.Effect{
		effects.PatchNode{Name: "a", AddTaints: disrupted},
		effects.SetCondition{Object: effects.NodeClaimRef("nc-a"), Condition: metav1.Condition{Type: v1.ConditionTypeDisruptionReason,
			Status: metav1.ConditionTrue, Reason: string(v1.DisruptionReasonEmpty), Message: "Emptiness", LastTransitionTime: now}},
		effects.DeleteNodeClaim{Name: "nc-a"},
		effects.Event{Object: effects.NodeClaimRef("nc-a"), Type: corev1.EventTypeNormal, Reason: EventDisruptionTerminating, Action: "Emptiness",
			Message: "Emptiness (Empty): deleting the node"},
		effects.Event{Object: effects.NodeRef("a"), Type: corev1.EventTypeNormal, Reason: EventDisruptionTerminating, Action: "Emptiness",
			Message: "Emptiness (Empty): deleting the node"},
		effects.Metric{Name: MetricDecisions, Labels: []string{"Emptiness", "Empty"}, Value: 1},
		effects.Metric{Name: MetricDisrupted, Labels: []string{"Empty"}, Value: 1},
	}
	if diff := cmp.Diff(want, tick.Effects); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
}

// A stale taint goes with the reason recorded for the lost command, in
// the controller and simulate alike.
func TestTickEffectsOfAStaleTaint(t *testing.T) {
	c := newCluster("a")
	c.pod("web", "a")
	c.nodeNamed("a").Spec.Taints = disrupted
	c.snapshot(m5...)
	tick, err := NewEngine(Options{}).Tick(c.in, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := []effects.Effect{
		effects.PatchNode{Name: "a", RemoveTaints: disrupted},
		effects.RemoveCondition{Object: effects.NodeClaimRef("nc-a"), Type: v1.ConditionTypeDisruptionReason},
	}
	if diff := cmp.Diff(want, tick.Effects); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
}

func TestActionEffects(t *testing.T) {
	c := newCluster("a")
	cand := Candidate{NodeClaim: c.claim("a"), Node: c.nodeNamed("a")}
	cmd := Command{Method: "Drift", Reason: v1.DisruptionReasonDrifted, Candidates: []Candidate{cand}}
	repl := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "default-x"}}
	created := repl.DeepCopy()
	created.Finalizers = []string{v1.TerminationFinalizer}
	related := effects.NodeClaimRef("default-x")
	launching := "Drift (Drifted): launching replacement nodeclaim default-x"
	cases := []struct {
		name   string
		action Action
		want   []effects.Effect
	}{
		{"untaint", Action{Kind: ActionUntaint, Candidates: cmd.Candidates}, []effects.Effect{
			effects.PatchNode{Name: "a", RemoveTaints: disrupted},
			effects.RemoveCondition{Object: effects.NodeClaimRef("nc-a"), Type: v1.ConditionTypeDisruptionReason},
		}},
		{"launch", Action{Kind: ActionLaunch, NodeClaims: []*v1.NodeClaim{repl}}, []effects.Effect{
			effects.CreateNodeClaim{NodeClaim: created},
			effects.Event{Object: effects.NodeClaimRef("nc-a"), Related: &related, Type: corev1.EventTypeNormal, Reason: EventDisruptionLaunching, Action: "Drift", Message: launching},
			effects.Event{Object: effects.NodeRef("a"), Related: &related, Type: corev1.EventTypeNormal, Reason: EventDisruptionLaunching, Action: "Drift", Message: launching},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, actionEffects(cmd, tc.action, t0)); diff != "" {
				t.Errorf("effects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestForceful(t *testing.T) {
	deadline := t0.Add(2 * time.Minute)
	reason := metav1.Condition{Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: string(v1.DisruptionReasonInterrupted),
		Message: "interrupted (SpotInterruption)", LastTransitionTime: metav1.NewTime(t0)}
	stamp := effects.MergeMetadata{Object: effects.NodeClaimRef("nc-a"),
		Annotations: map[string]string{v1.NodeClaimTerminationTimestampAnnotationKey: deadline.Format(time.RFC3339)}}
	cases := []struct {
		name  string
		setup func(*v1.NodeClaim)
		want  []effects.Effect
	}{
		{"recorded, deleted, counted and reported", func(*v1.NodeClaim) {}, []effects.Effect{
			stamp,
			effects.SetCondition{Object: effects.NodeClaimRef("nc-a"), Condition: reason},
			effects.DeleteNodeClaim{Name: "nc-a"},
			effects.Metric{Name: MetricDisrupted, Labels: []string{"Interrupted"}, Value: 1},
			effects.Event{Object: effects.NodeClaimRef("nc-a"), Type: corev1.EventTypeNormal, Reason: EventDisruptionTerminating, Action: "Interrupted",
				Message: "interrupted (SpotInterruption): deleting the node"},
			effects.Event{Object: effects.NodeRef("a"), Type: corev1.EventTypeNormal, Reason: EventDisruptionTerminating, Action: "Interrupted",
				Message: "interrupted (SpotInterruption): deleting the node"},
		}},
		{"already deleting: an earlier deadline only", func(nc *v1.NodeClaim) {
			nc.DeletionTimestamp = &metav1.Time{Time: t0}
			nc.Annotations = map[string]string{v1.NodeClaimTerminationTimestampAnnotationKey: t0.Add(time.Hour).Format(time.RFC3339)}
			nc.Status.Conditions = append(nc.Status.Conditions, reason)
		}, []effects.Effect{stamp}},
		{"already deleting with a sooner deadline: nothing", func(nc *v1.NodeClaim) {
			nc.DeletionTimestamp = &metav1.Time{Time: t0}
			nc.Annotations = map[string]string{v1.NodeClaimTerminationTimestampAnnotationKey: t0.Add(time.Minute).Format(time.RFC3339)}
			nc.Status.Conditions = append(nc.Status.Conditions, reason)
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc := newCluster("a").claim("a")
			tc.setup(nc)
			got := Forceful(nc, v1.DisruptionReasonInterrupted, "interrupted (SpotInterruption)", deadline, t0)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("effects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpire(t *testing.T) {
	nc := newCluster("a").claim("a")
	nc.Spec.ExpireAfter = v1.MustParseNillableDuration("1h")
	if effs, wake := Expire(nc, t0.Add(time.Minute)); effs != nil || !wake.Equal(t0.Add(time.Hour)) {
		t.Errorf("before expiry: %v, wake %s; want nothing until %s", effs, wake, t0.Add(time.Hour))
	}
	effs, wake := Expire(nc, t0.Add(time.Hour))
	if !wake.IsZero() || !cmp.Equal(effs[1], effects.DeleteNodeClaim{Name: "nc-a"}) {
		t.Errorf("at expiry: %v, wake %s; want the NodeClaim deleted", effs, wake)
	}
	if c, ok := effs[0].(effects.SetCondition); !ok || c.Condition.Reason != string(v1.DisruptionReasonExpired) || c.Condition.Message != "expired: lived for its expireAfter (1h0m0s)" {
		t.Errorf("first effect %+v, want the Expired reason recorded", effs[0])
	}
	nc.Spec.ExpireAfter = v1.MustParseNillableDuration("Never")
	if effs, wake := Expire(nc, t0.Add(time.Hour)); effs != nil || !wake.IsZero() {
		t.Errorf("never expiring: %v, wake %s; want nothing", effs, wake)
	}
}

// Conditions sets or removes only what changes.
func TestConditionsEffects(t *testing.T) {
	c := newCluster("a")
	nc := c.claim("a")
	nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue})
	effs, at := Conditions(nc, c.pool(), "", false, t0)
	want := []effects.Effect{effects.SetCondition{Object: effects.NodeClaimRef("nc-a"), Condition: metav1.Condition{Type: v1.ConditionTypeConsolidatable,
		Status: metav1.ConditionTrue, Reason: v1.ConditionTypeConsolidatable, Message: "consolidateAfter has passed since the last pod event", LastTransitionTime: metav1.NewTime(t0)}}}
	if diff := cmp.Diff(want, effs); diff != "" || !at.IsZero() {
		t.Errorf("effects (-want +got), wake %s:\n%s", at, diff)
	}
	UpdateConditions(nc, c.pool(), "", false, t0)
	if effs, _ := Conditions(nc, c.pool(), "", false, t0.Add(time.Minute)); effs != nil {
		t.Errorf("nothing changed, got %v", effs)
	}
	c.drift("a", t0)
	want = []effects.Effect{effects.RemoveCondition{Object: effects.NodeClaimRef("nc-a"), Type: v1.ConditionTypeDrifted}}
	if diff := cmp.Diff(want, mustConditions(Conditions(nc, c.pool(), "", false, t0))); diff != "" {
		t.Errorf("gate off, drifted (-want +got):\n%s", diff)
	}
}

func mustConditions(effs []effects.Effect, _ time.Time) []effects.Effect { return effs }

// The controller's history starts at its first tick: an offering never
// marked has been available only since then. Simulate's is complete.
func TestHistoryFromFirstTick(t *testing.T) {
	for _, from := range []bool{false, true} {
		e := NewEngine(Options{HistoryFromFirstTick: from})
		in := newCluster().in
		if _, err := e.Tick(in, nil, t0); err != nil {
			t.Fatal(err)
		}
		var seen time.Time
		e.Options.Methods = []Method{probe{f: func(env Env) { seen = env.Unavailable.Since }}}
		if _, err := e.Tick(in, nil, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		want := time.Time{}
		if from {
			want = t0
		}
		if !seen.Equal(want) {
			t.Errorf("HistoryFromFirstTick %v: history since %s, want %s", from, seen, want)
		}
	}
}

// probe is a method that only looks at what it is given.
type probe struct{ f func(Env) }

func (probe) Name() string                { return "Probe" }
func (probe) Reason() v1.DisruptionReason { return v1.DisruptionReasonEmpty }
func (p probe) Compute(env Env) Outcome   { p.f(env); return Outcome{} }
