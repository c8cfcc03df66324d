package simulator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/simulator"
)

// annotate puts simulate's timing annotations ("apply-at: 10m") into a
// manifest's first flow-style metadata.
func annotate(manifest string, annotations ...string) string {
	var pairs []string
	for _, a := range annotations {
		k, v, _ := strings.Cut(a, ": ")
		pairs = append(pairs, "simulate.capstan.dev/"+k+": "+v)
	}
	return strings.Replace(manifest, "metadata: {", "metadata: {annotations: {"+strings.Join(pairs, ", ")+"}, ", 1)
}

func eventAt(t *testing.T, r *simulator.Result, kind, object string) simulator.Event {
	t.Helper()
	for _, e := range r.Events {
		if e.Kind == kind && e.Object == object {
			return e
		}
	}
	t.Fatalf("no %s event for %s in %v", kind, object, r.Events)
	return simulator.Event{}
}

// A Deployment applied at 10m and deleted at 40m: nothing runs before
// 10m, its pods run on nodes launched for them after, and they are gone
// at the end.
func TestTimedDeployment(t *testing.T) {
	set := read(t, placementHeader+nodePoolYAML("default", "")+
		annotate(deploymentYAML("web", 3, ""), "apply-at: 10m", "delete-at: 40m"))
	if len(set.Deployments) != 0 || len(set.Timed) != 2 {
		t.Fatalf("%d Deployments at the start and %d timed changes, want 0 and 2", len(set.Deployments), len(set.Timed))
	}
	r := run(t, set, func(o *simulator.Options) { o.Duration = time.Hour })

	if e := eventAt(t, r, "Applied", "deployment/default/web"); e.At != "10m0s" || !strings.HasPrefix(e.Message, "created (test.yaml, document 4)") {
		t.Errorf("applied: %+v", e)
	}
	if e := eventAt(t, r, "Deleted", "deployment/default/web"); e.At != "40m0s" || !strings.Contains(e.Message, "3 pod(s) deleted") {
		t.Errorf("deleted: %+v, want its 3 pods deleted at 40m", e)
	}
	if len(r.Nodes) == 0 {
		t.Fatal("no node was launched for the Deployment")
	}
	for _, n := range r.Nodes {
		if at(t, n.LaunchedAt) < 10*time.Minute {
			t.Errorf("node %s launched at %s, before the Deployment was applied", n.Name, n.LaunchedAt)
		}
	}
	// The samples: nothing before 10m, 3 pods pending at 10m, all running
	// on nodes before 40m.
	ran := false
	for _, s := range r.Samples {
		d := at(t, s.At)
		switch {
		case d < 10*time.Minute && (s.PodsPending > 0 || s.Nodes["on-demand"] > 0):
			t.Errorf("sample at %s: %d pending, %v nodes before the Deployment exists", s.At, s.PodsPending, s.Nodes)
		case d == 10*time.Minute && s.PodsPending != 3:
			t.Errorf("sample at 10m: %d pods pending, want the 3 new ones", s.PodsPending)
		case d > 10*time.Minute && d < 40*time.Minute && s.PodsPending == 0 && s.Nodes["on-demand"] > 0:
			ran = true
		}
	}
	if !ran {
		t.Errorf("the pods never ran between 10m and 40m: %+v", r.Samples)
	}
	if len(r.Pods) != 0 {
		t.Errorf("pods %v at the end, after the Deployment was deleted", r.Pods)
	}
}

// A NodePool edited at 30m (its requirements, which is drift): what is
// launched after the edit, for a Deployment that does not fit the first
// node, follows the new version.
func TestTimedNodePoolEdit(t *testing.T) {
	edited := strings.Replace(nodePoolYAML("default", ""), "[m6i.large, m6i.4xlarge]", "[m6i.xlarge]", 1)
	set := read(t, placementHeader+nodePoolYAML("default", "")+
		deploymentYAML("early", 1, "")+
		annotate(edited, "apply-at: 30m")+
		annotate(deploymentYAML("late", 4, ""), "apply-at: 35m"))
	r := run(t, set, func(o *simulator.Options) { o.Duration = time.Hour })
	if e := eventAt(t, r, "Applied", "nodepool/default"); e.At != "30m0s" || !strings.HasPrefix(e.Message, "replaced (test.yaml, document 5)") {
		t.Errorf("the edit: %+v", e)
	}
	var before, after []string
	for _, n := range r.Nodes {
		if at(t, n.LaunchedAt) < 30*time.Minute {
			before = append(before, n.InstanceType)
		} else {
			after = append(after, n.InstanceType)
		}
	}
	if len(before) == 0 || len(after) == 0 {
		t.Fatalf("nodes launched before the edit %v, after %v; want some of each", before, after)
	}
	for _, it := range before {
		if it != "m6i.large" {
			t.Errorf("before the edit a %s was launched, want the cheaper m6i.large", it)
		}
	}
	for _, it := range after {
		if it != "m6i.xlarge" {
			t.Errorf("after the edit a %s was launched, want the edited NodePool's m6i.xlarge", it)
		}
	}
}

// Deleting a NodePool cascades to its NodeClaims, drained and deleted
// gracefully; nothing new launches from it, and the event says so.
func TestTimedNodePoolDeletion(t *testing.T) {
	set := read(t, placementHeader+annotate(nodePoolYAML("default", ""), "delete-at: 20m")+
		deploymentYAML("early", 1, "")+
		annotate(deploymentYAML("late", 4, ""), "apply-at: 25m"))
	r := run(t, set, func(o *simulator.Options) { o.Duration = time.Hour })
	if e := eventAt(t, r, "Deleted", "nodepool/default"); e.At != "20m0s" || !strings.Contains(e.Message, "its 1 NodeClaim(s) are deleted with it") {
		t.Errorf("deleted: %+v", e)
	}
	if len(r.Nodes) != 1 {
		t.Fatalf("%d nodes launched, want 1: nothing launches from a deleted NodePool", len(r.Nodes))
	}
	if n := r.Nodes[0]; n.DeletedAt != "20m0s" || n.DeletionReason != "Deleted" {
		t.Errorf("node deleted at %q for %q, want at 20m0s for Deleted", n.DeletedAt, n.DeletionReason)
	}
	if r.Summary.PodsPending == 0 {
		t.Errorf("no pod pending; the late ones do not all fit the one node")
	}
	for _, p := range r.Pods {
		if p.Node == "" && !strings.HasPrefix(p.PendingReason, "NoNodePool: ") {
			t.Errorf("%s pending with %q, want NoNodePool", p.Name, p.PendingReason)
		}
	}
}

// The timed changes are key events in the text summary.
func TestTimedChangesInText(t *testing.T) {
	r := &simulator.Result{Events: []simulator.Event{{At: "10m0s", Kind: "Applied", Object: "deployment/default/web", Message: "created (a.yaml, document 1)"}}}
	var b strings.Builder
	if err := simulator.WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Applied  deployment/default/web  created (a.yaml, document 1)") {
		t.Errorf("text summary without the Applied event:\n%s", b.String())
	}
}
