package disruption_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// consolidationRun is what a run of consolidation to its fixed point did.
type consolidationRun struct {
	before, after, fresh, bound float64
	nodesBefore, nodesAfter     int
	freshNodes, pods, rounds    int
	commands                    map[string]int
	removed, launched           int
}

// consolidate shrinks a cluster built by solving the reference workload
// of n pods: a random (seeded) 70% of the pods go, then consolidation
// runs to its fixed point, one command per round as the controller
// carries them out, at most maxRounds.
func consolidate(tb testing.TB, n int, seed uint64, gates disruption.Gates, onDemand bool, maxRounds int) consolidationRun {
	tb.Helper()
	c := shrunkenRefCluster(tb, n, seed, onDemand)
	run := consolidationRun{before: c.cost(), nodesBefore: len(c.nodes), commands: map[string]int{}}
	now := refEpoch.Add(time.Hour)
	for run.rounds = 0; run.rounds < maxRounds; run.rounds++ {
		in := c.input()
		d := disruption.Plan(in, disruption.Methods(gates), now)
		if !d.Found {
			break
		}
		run.commands[d.Command.Method]++
		run.removed += len(d.Command.Candidates)
		run.launched += len(d.Command.Replacements)
		c.apply(tb, in, d.Command)
	}
	remaining := c.pods()
	run.after, run.nodesAfter, run.pods = c.cost(), len(c.nodes), len(remaining)
	run.fresh, run.freshNodes = c.freshCost(tb, remaining)
	run.bound = provisioning.LowerBound(remaining, c.its)
	return run
}

// shrunkenRefCluster is a cluster built by solving the reference
// workload of n pods, with a random (seeded) 70% of the pods gone.
func shrunkenRefCluster(tb testing.TB, n int, seed uint64, onDemand bool) *refCluster {
	tb.Helper()
	c := newRefCluster(seed)
	if onDemand {
		c.pool.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}}}
	}
	c.provision(tb, refPods(n, n/5, c.rng))
	deleted := map[string]bool{}
	all := c.pods()
	for _, i := range c.rng.Perm(len(all))[:len(all)*7/10] {
		deleted[all[i].Name] = true
	}
	c.deletePods(func(_ *refNode, p *corev1.Pod) bool { return !deleted[p.Name] })
	return c
}

// Single-node consolidation judges candidates several at once: every
// round of a run to the fixed point decides the same, verdicts included,
// with one worker and with three.
func TestSingleNodeConsolidationIsTheSameOnAnyNumberOfWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs consolidation to its fixed point")
	}
	c := shrunkenRefCluster(t, 500, 2, true)
	now := refEpoch.Add(time.Hour)
	single := func(workers int) []disruption.Method {
		return []disruption.Method{disruption.SingleNodeConsolidation{Workers: workers}}
	}
	for round := 0; round < 200; round++ {
		in := c.input()
		one := disruption.Plan(in, single(1), now)
		if diff := cmp.Diff(decided(one), decided(disruption.Plan(in, single(3), now))); diff != "" {
			t.Fatalf("round %d: three workers decide otherwise than one (-one +three):\n%s", round, diff)
		}
		if !one.Found {
			if round == 0 || len(one.Verdicts) == 0 {
				t.Fatalf("round %d: nothing to compare (%d verdicts)", round, len(one.Verdicts))
			}
			return
		}
		c.apply(t, in, one.Command)
	}
	t.Fatal("no fixed point")
}

// decided is a decision as text: the command's nodes and replacements'
// instance types, then every verdict.
func decided(d disruption.Decision) []string {
	var out []string
	for _, cand := range d.Command.Candidates {
		out = append(out, "candidate "+cand.Node.Name)
	}
	for _, r := range d.Command.Replacements {
		line := "replacement"
		for _, it := range r.InstanceTypes {
			line += " " + it.Name
		}
		out = append(out, line)
	}
	for _, v := range d.Verdicts {
		out = append(out, fmt.Sprintf("verdict %s %s %s %s", v.Node, v.Method, v.Event, v.Message))
	}
	return out
}

// Consolidation makes a shrunken cluster cheaper by itself. Issue 19's
// target is to end within 1.15× of what provisioning the remaining pods
// afresh costs: met where nodes may be replaced (the on-demand NodePool,
// 0.92×) and under SpotToSpotConsolidation (1.145×), not where spot nodes
// may only be deleted (see docs/designs/disruption.md, "Consolidation:
// measured"). The ceilings below are the measured ratios with a little
// room, guarding against regressions. The runs are deterministic; the
// figures are logged (go test -run ConsolidationQuality -v ./pkg/disruption).
//
// The reference catalog prices spot and on-demand alike, so the solver
// launches spot wherever a pod allows it: under the default gates a spot
// node can then only be deleted, never replaced. The on-demand NodePool
// shows what consolidation does without the spot rules.
func TestConsolidationQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("runs consolidation to its fixed point")
	}
	for _, tc := range []struct {
		name     string
		gates    disruption.Gates
		onDemand bool
		ceiling  float64
	}{
		{"default gates", disruption.Gates{}, false, 1.3},
		{"SpotToSpotConsolidation", disruption.Gates{SpotToSpotConsolidation: true}, false, 1.2},
		{"on-demand NodePool", disruption.Gates{}, true, 1.0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const maxRounds = 500
			r := consolidate(t, 1000, 1, tc.gates, tc.onDemand, maxRounds)
			t.Logf("%d pods left of 1000; %d nodes %.1f/h before, %d nodes %.1f/h after %d commands %v (%d nodes removed, %d launched); fresh solve %d nodes %.1f/h, lower bound %.1f/h",
				r.pods, r.nodesBefore, r.before, r.nodesAfter, r.after, r.rounds, r.commands, r.removed, r.launched, r.freshNodes, r.fresh, r.bound)
			t.Logf("after ÷ before %.3f, after ÷ fresh %.3f, after ÷ lower bound %.3f, fresh ÷ lower bound %.3f",
				r.after/r.before, r.after/r.fresh, r.after/r.bound, r.fresh/r.bound)
			if r.rounds == maxRounds {
				t.Errorf("no fixed point after %d commands", maxRounds)
			}
			if r.after >= r.before {
				t.Errorf("consolidation did not lower the cost: %.1f/h before, %.1f/h after", r.before, r.after)
			}
			if r.after > tc.ceiling*r.fresh {
				t.Errorf("%.1f/h after consolidation, more than %.2f × the fresh solve's %.1f/h", r.after, tc.ceiling, r.fresh)
			}
		})
	}
}
