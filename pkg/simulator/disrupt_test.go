package simulator_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/simulator"
)

// widened is the NodePool of nodePoolYAML with m6i.xlarge added: the
// nodes still match, so nothing drifts.
func widened(name string) string {
	return strings.Replace(nodePoolYAML(name, ""), "[m6i.large, m6i.4xlarge]", "[m6i.large, m6i.xlarge, m6i.4xlarge]", 1)
}

// narrowed allows only m6i.xlarge: every m6i.large node drifts.
func narrowed(name string) string {
	return strings.Replace(nodePoolYAML(name, ""), "[m6i.large, m6i.4xlarge]", "[m6i.xlarge]", 1)
}

func pdbYAML(name, app, spec string) string {
	return `---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: ` + name + `, namespace: default}
spec: {` + spec + `, selector: {matchLabels: {app: ` + app + `}}}
`
}

const budgets = "  disruption:\n    budgets: [{nodes: \"%s\"}]\n"

func withBudget(nodes string) string { return strings.Replace(budgets, "%s", nodes, 1) }

// spread puts each replica on its own node (hostname anti-affinity).
const spread = `      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}
`

// Deleting a Deployment empties its nodes; Emptiness removes them, one at
// a time under a budget of one node, each recorded as disrupted (Empty).
func TestEmptinessRemovesNodesWithinTheBudget(t *testing.T) {
	set := read(t, placementHeader+nodePoolYAML("default", withBudget("1"))+
		annotate(deploymentYAML("web", 3, spread), "delete-at: 10m"))
	r := run(t, set, func(o *simulator.Options) { o.Duration = time.Hour })
	if len(r.Nodes) != 3 {
		t.Fatalf("%d nodes launched, want 3", len(r.Nodes))
	}
	var deleted []time.Duration
	for _, n := range r.Nodes {
		if n.DeletionReason != "Empty" || n.DisruptedAt == "" || n.DeletedAt == "" {
			t.Fatalf("node %s: disrupted %q, deleted %q for %q; want every node removed as Empty", n.Name, n.DisruptedAt, n.DeletedAt, n.DeletionReason)
		}
		if at(t, n.DisruptedAt) < 10*time.Minute {
			t.Errorf("node %s disrupted at %s, before it was empty", n.Name, n.DisruptedAt)
		}
		deleted = append(deleted, at(t, n.DeletedAt))
	}
	for i := range deleted {
		for j := range i {
			if deleted[i] == deleted[j] {
				t.Errorf("two nodes deleted at %s under a budget of one", deleted[i])
			}
		}
	}
	if len(eventsOf(r, "DisruptionTerminating")) != 3 {
		t.Errorf("DisruptionTerminating events %v, want one per node", eventsOf(r, "DisruptionTerminating"))
	}
}

// A budget of 0, consolidateAfter: Never and a node's do-not-disrupt
// annotation each keep an empty node; the budget's verdict is reported,
// at most every five minutes.
func TestEmptyNodesKept(t *testing.T) {
	for _, tc := range []struct {
		name, pool string
		verdict    string
	}{
		{"budget of 0", withBudget("0"), "disruption budget of 0 for Empty"},
		{"consolidateAfter Never", "  disruption: {consolidateAfter: Never}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := read(t, placementHeader+nodePoolYAML("default", tc.pool)+annotate(deploymentYAML("web", 2, ""), "delete-at: 10m"))
			r := run(t, set, func(o *simulator.Options) { o.Duration = time.Hour })
			if len(nodesWhere(r, alive)) != len(r.Nodes) || len(r.Nodes) == 0 {
				t.Fatalf("nodes %+v; want every node kept", r.Nodes)
			}
			var events []simulator.Event
			for _, e := range eventsOf(r, "Unconsolidatable") {
				if strings.HasSuffix(e.Message, "for Empty") {
					events = append(events, e)
				}
			}
			if tc.verdict == "" {
				if len(events) != 0 {
					t.Errorf("verdicts %v, want none", events)
				}
				return
			}
			if len(events) == 0 || events[0].Message != tc.verdict {
				t.Fatalf("verdicts %v, want %q", events, tc.verdict)
			}
			// 50 minutes empty, reported every five: about ten times, not every poll.
			if perNode := len(events) / len(r.Nodes); perNode < 9 || perNode > 11 {
				t.Errorf("%d verdicts per node over 50 minutes, want one every five minutes", perNode)
			}
		})
	}
}

// Narrowing the NodePool's requirements drifts its nodes: each is
// replaced by a pre-spun node of the allowed type before it goes, and no
// pod is left pending. Widening them drifts nothing.
func TestDrift(t *testing.T) {
	set := read(t, placementHeader+nodePoolYAML("default", "")+annotate(narrowed("default"), "apply-at: 30m")+deploymentYAML("web", 2, spread))
	r := run(t, set, func(o *simulator.Options) { o.Duration = time.Hour })
	var old, replacements []simulator.Node
	for _, n := range r.Nodes {
		if n.InstanceType == "m6i.large" {
			old = append(old, n)
		} else {
			replacements = append(replacements, n)
		}
	}
	if len(old) != 2 || len(replacements) != 2 {
		t.Fatalf("nodes %+v; want two m6i.large replaced by two m6i.xlarge", r.Nodes)
	}
	for i, n := range old {
		if n.DeletionReason != "Drifted" || n.DisruptedAt == "" {
			t.Errorf("node %s deleted for %q (disrupted %q), want Drifted", n.Name, n.DeletionReason, n.DisruptedAt)
		}
		if r := replacements[i]; r.InstanceType != "m6i.xlarge" || at(t, r.LaunchedAt) > at(t, n.DeletedAt) || r.DeletedAt != "" {
			t.Errorf("replacement %+v of %s: want an m6i.xlarge launched before %s and kept", r, n.Name, n.DeletedAt)
		}
	}
	if r.Summary.PodsPending != 0 {
		t.Errorf("%d pods pending at the end", r.Summary.PodsPending)
	}

	set = read(t, placementHeader+nodePoolYAML("default", "")+annotate(widened("default"), "apply-at: 30m")+deploymentYAML("web", 2, spread))
	r = run(t, set, func(o *simulator.Options) { o.Duration = time.Hour })
	if len(r.Nodes) != 2 || len(nodesWhere(r, alive)) != 2 {
		t.Errorf("nodes %+v; widening the requirements must not replace any", r.Nodes)
	}
}

// Busy drifted nodes go as many at once as the Drifted budget allows (the
// reference starts a command per node until the budget is spent): under a
// budget of two, two of three are disrupted together, the third after.
func TestDriftTakesAsManyAsTheBudgetAllows(t *testing.T) {
	narrowedWithBudget := strings.Replace(nodePoolYAML("default", withBudget("2")), "[m6i.large, m6i.4xlarge]", "[m6i.xlarge]", 1)
	set := read(t, placementHeader+nodePoolYAML("default", withBudget("2"))+annotate(narrowedWithBudget, "apply-at: 30m")+deploymentYAML("web", 3, spread))
	r := run(t, set, func(o *simulator.Options) { o.Duration = time.Hour })
	disrupted := map[string]int{}
	for _, n := range r.Nodes {
		if n.InstanceType == "m6i.large" {
			if n.DeletionReason != "Drifted" || n.DisruptedAt == "" {
				t.Fatalf("node %s deleted for %q (disrupted %q), want Drifted", n.Name, n.DeletionReason, n.DisruptedAt)
			}
			disrupted[n.DisruptedAt]++
		}
	}
	var counts []int
	for _, c := range disrupted {
		counts = append(counts, c)
	}
	slices.Sort(counts)
	if !slices.Equal(counts, []int{1, 2}) {
		t.Errorf("drifted nodes disrupted at %v, want two together and one after", disrupted)
	}
	if r.Summary.PodsPending != 0 {
		t.Errorf("%d pods pending at the end", r.Summary.PodsPending)
	}
}

// Drifted nodes stay when a PDB allows no eviction, when a pod has
// do-not-disrupt, or with the Drift gate off; the blocked ones say why.
func TestDriftBlocked(t *testing.T) {
	doNotDisrupt := strings.Replace(deploymentYAML("web", 2, spread), "metadata: {labels: {app: web}}",
		"metadata: {labels: {app: web}, annotations: {karpenter.sh/do-not-disrupt: \"true\"}}", 1)
	for _, tc := range []struct {
		name, extra, workload string
		drift                 bool
		verdict               string
	}{
		{"a PDB", pdbYAML("web-pdb", "web", "minAvailable: 2"), deploymentYAML("web", 2, spread), true, "pdb default/web-pdb prevents pod evictions"},
		{"do-not-disrupt", "", doNotDisrupt, true, "pod default/web-"},
		{"the Drift gate off", "", deploymentYAML("web", 2, spread), false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := read(t, placementHeader+nodePoolYAML("default", "")+annotate(narrowed("default"), "apply-at: 30m")+tc.workload+tc.extra)
			r := run(t, set, func(o *simulator.Options) { o.Duration = time.Hour; o.Disruption.Gates.Drift = tc.drift })
			if len(r.Nodes) != 2 || len(nodesWhere(r, alive)) != 2 {
				t.Fatalf("nodes %+v; want both drifted nodes kept", r.Nodes)
			}
			events := eventsOf(r, "DisruptionBlocked")
			if tc.verdict == "" {
				if len(events) != 0 {
					t.Errorf("verdicts %v, want none", events)
				}
				return
			}
			if len(events) == 0 || !strings.HasPrefix(events[0].Message, tc.verdict) || at(t, events[0].At) < 30*time.Minute {
				t.Errorf("verdicts %v, want %q after 30m", events, tc.verdict)
			}
		})
	}
}

// consolidateAfter counts from the last pod event (the pods leaving at
// 10m), not from the node's launch.
func TestConsolidateAfterCountsFromTheLastPodEvent(t *testing.T) {
	set := read(t, placementHeader+nodePoolYAML("default", "  disruption: {consolidateAfter: 5m}\n")+
		annotate(deploymentYAML("web", 2, ""), "delete-at: 10m"))
	r := run(t, set, func(o *simulator.Options) { o.Duration = time.Hour })
	for _, n := range r.Nodes {
		if n.DeletionReason != "Empty" || at(t, n.DisruptedAt) < 15*time.Minute || at(t, n.DisruptedAt) > 16*time.Minute {
			t.Errorf("node %s disrupted at %q for %q; want Empty soon after 15m", n.Name, n.DisruptedAt, n.DeletionReason)
		}
	}
}

// A do-not-disrupt duration holds the drifted nodes from the pods' start
// (their binding: the simulated kubelet starts them at once) until it
// ends, then Drift replaces them, as the controller does
// (docs/disruption.md, "do-not-disrupt with a duration").
func TestDriftWaitsOutADoNotDisruptDuration(t *testing.T) {
	held := strings.Replace(deploymentYAML("web", 2, spread), "metadata: {labels: {app: web}}",
		"metadata: {labels: {app: web}, annotations: {karpenter.sh/do-not-disrupt: \"45m\"}}", 1)
	set := read(t, placementHeader+nodePoolYAML("default", "")+annotate(narrowed("default"), "apply-at: 30m")+held)
	r := run(t, set, func(o *simulator.Options) { o.Duration = 2 * time.Hour })
	events := eventsOf(r, "DisruptionBlocked")
	if len(events) == 0 || !strings.Contains(events[0].Message, "has do-not-disrupt until") {
		t.Errorf("verdicts %v, want one saying until when the pods are held", events)
	}
	drifted := 0
	for _, n := range r.Nodes {
		if n.InstanceType != "m6i.large" {
			continue
		}
		drifted++
		if n.DeletionReason != "Drifted" || n.DisruptedAt == "" || at(t, n.DisruptedAt) < 45*time.Minute {
			t.Errorf("node %s deleted for %q, disrupted at %q; want Drifted once the pods' 45m have passed", n.Name, n.DeletionReason, n.DisruptedAt)
		}
	}
	if drifted != 2 {
		t.Errorf("nodes %+v; want two m6i.large replaced", r.Nodes)
	}
}
