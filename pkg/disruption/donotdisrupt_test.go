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

// withGrace gives node's NodeClaim a terminationGracePeriod.
func (c *cluster) withGrace(node string) {
	c.claim(node).Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
}

// A pod's hold does not stop drift on a NodeClaim with a
// terminationGracePeriod: the reference's Drift is of the "eventual"
// class (pkg/controllers/disruption/types.go, NewCandidate; drift_test.go
// "should disrupt nodes with do-not-disrupt pods / blocking PDBs when the
// NodeClaim has a TerminationGracePeriod"). The node's own do-not-disrupt
// still holds it.
func TestDriftWithATerminationGracePeriod(t *testing.T) {
	runReplaceCases(t, Drift{}, []replaceCase{
		{"a do-not-disrupt pod does not hold it", func(c *cluster) {
			c.drift("a", t0)
			c.withGrace("a")
			c.pod("web", "a", doNotDisrupt, requests("1"))
		}, []string{"a"}, [][]string{}, nil, 1},
		{"nor a PDB that allows no eviction", func(c *cluster) {
			c.drift("a", t0)
			c.withGrace("a")
			c.pod("web", "a", requests("1"))
			c.pdb("web-pdb", 0)
		}, []string{"a"}, [][]string{}, nil, 1},
		{"without one the pod holds it", func(c *cluster) {
			c.drift("a", t0)
			c.withGrace("b")
			c.pod("web", "a", doNotDisrupt, requests("1"))
		}, nil, [][]string{}, []Verdict{driftBlocked("a", "pod default/web has do-not-disrupt")}, 1},
		{"do-not-disrupt on the node still holds it", func(c *cluster) {
			c.drift("a", t0)
			c.withGrace("a")
			c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}, nil, [][]string{}, []Verdict{driftBlocked("a", "node a has do-not-disrupt")}, 1},
	})
}

// Consolidation is graceful: a terminationGracePeriod does not let it
// past a do-not-disrupt pod.
func TestConsolidationHeldDespiteATerminationGracePeriod(t *testing.T) {
	c := newCluster("a", "b")
	c.capacity("a", "4")
	c.capacity("b", "4")
	c.withGrace("a")
	c.pod("web", "a", doNotDisrupt, requests("1"))
	c.pod("fill", "b", requests("1"))
	c.claim("b").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
	c.snapshot(m5...)
	d := Plan(c.in, []Method{SingleNodeConsolidation{}}, t0.Add(time.Hour))
	if d.Found {
		t.Fatalf("consolidation disrupts %v", names(d.Command.Candidates))
	}
}

// A do-not-disrupt duration holds a drifted node until it ends, and the
// plan wakes then (the reference: designs/do-not-disrupt-grace-period.md,
// "expiration_time = pod.Status.StartTime + parsed_duration").
func TestDoNotDisruptDurationWakesThePlanner(t *testing.T) {
	now := t0.Add(time.Hour)
	c := newCluster("a", "b")
	c.capacity("a", "4")
	c.capacity("b", "4")
	c.drift("a", t0)
	c.pod("batch", "a", doNotDisruptFor("45m", t0.Add(30*time.Minute)), requests("1"))
	c.snapshot(m5...)
	until := t0.Add(75 * time.Minute)
	d := Plan(c.in, []Method{Drift{}}, now)
	if d.Found {
		t.Fatalf("drift disrupts %v while the pod is held", names(d.Command.Candidates))
	}
	sameVerdicts(t, []Verdict{driftBlocked("a", "pod default/batch has do-not-disrupt until 2026-03-10T13:15:00Z")}, d.Verdicts)
	if !d.WakeAt.Equal(until) {
		t.Errorf("wakes at %s, want %s", d.WakeAt, until)
	}
	e := NewEngine(Options{Methods: []Method{Drift{}}, ValidationDelay: DefaultValidationDelay})
	tick, err := e.Tick(c.in, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if !tick.WakeAt.Equal(until) {
		t.Errorf("the engine wakes at %s, want %s", tick.WakeAt, until)
	}
	if d := Plan(c.in, []Method{Drift{}}, until); !d.Found || names(d.Command.Candidates)[0] != "a" {
		t.Errorf("at %s drift disrupts %v, want a", until, names(d.Command.Candidates))
	}
}

// An invalid value holds the node as "true" and the pod gets a Warning
// event under the reference's reason (pkg/utils/pod/events.go).
func TestInvalidDoNotDisruptEvent(t *testing.T) {
	c := newCluster("a", "b")
	c.capacity("a", "4")
	c.capacity("b", "4")
	c.drift("a", t0)
	c.pod("web", "a", doNotDisruptFor("1 hour", t0), requests("1"))
	c.snapshot(m5...)
	tick, err := NewEngine(Options{Methods: []Method{Drift{}}}).Tick(c.in, nil, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if tick.Started != nil {
		t.Fatalf("drift started on %v", names(tick.Started.Candidates))
	}
	var got []effects.Event
	for _, e := range tick.Effects {
		if ev, ok := e.(effects.Event); ok && ev.Object.Kind == effects.KindPod {
			got = append(got, ev)
		}
	}
	want := []effects.Event{{Object: effects.PodRef("default", "web"), Type: corev1.EventTypeWarning, Reason: "InvalidDoNotDisruptAnnotation", Action: "Drift",
		Message: `invalid karpenter.sh/do-not-disrupt annotation: "1 hour" is neither "true" nor a duration; the pod is held as for "true"`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod events (-want +got):\n%s", diff)
	}
}
