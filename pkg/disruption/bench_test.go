package disruption_test

import (
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/disruption"
)

// Scenarios of the consolidation benchmarks, both a cluster of about n
// nodes running about p pods of the reference shapes with a third of the
// nodes underutilized.
const (
	// movable: the underutilized nodes' pods can move to the others' free
	// room, so a pass finds a multi-node command among the first
	// candidates.
	movable = "movable"
	// fixedPoint: nothing can go. Every node is spot and runs one
	// hostname anti-affine pod that only a replacement could take, and a
	// spot-to-spot replacement is refused (SpotToSpotConsolidation is off
	// by default): the pass simulates every candidate and turns each
	// down, as every pass does once a cluster has reached its fixed
	// point.
	fixedPoint = "fixed-point"
)

// underutilized builds a scenario's cluster. It solves more pods than
// wanted, nodes of them hostname anti-affine (app=nginx, one per node),
// then deletes pods on a random third of the nodes until pods are left:
// about 3 in 4 of the others there, and under movable also those nodes'
// anti-affine pods. No node is left empty, so the consolidation methods
// decide, not Emptiness. Under fixedPoint the NodePool launches spot
// only (in zone-1 and zone-2, the zones that sell it), and the few nodes the solve opened without an anti-affine pod
// are dropped with their pods.
func underutilized(tb testing.TB, nodes, pods int, scenario string, seed uint64) *refCluster {
	tb.Helper()
	nginx := nodes / 3
	c := newRefCluster(seed)
	if scenario == fixedPoint {
		nginx = 0
		// Zone-3 sells no spot; the zones are named so the solver's
		// topology domains leave it out too (it takes a zone spread's
		// domains from the instance types' zones, whatever capacity type
		// the NodePool allows).
		c.pool.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot}},
			{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-1", "zone-2"}}}
	}
	c.provision(tb, refPods((pods-nodes/4+nginx)*4/3, nodes, c.rng))
	anti := func(n *refNode) *corev1.Pod {
		for _, p := range n.pods {
			if p.Labels["app"] == "nginx" {
				return p
			}
		}
		return nil
	}
	if scenario == fixedPoint {
		var kept []*refNode
		for _, n := range c.nodes {
			if anti(n) != nil {
				kept = append(kept, n)
			}
		}
		c.nodes = kept
	}
	third := map[string]bool{}
	for _, i := range c.rng.Perm(len(c.nodes))[:len(c.nodes)/3] {
		third[c.nodes[i].name] = true
	}
	excess := len(c.pods()) - pods
	deleted := map[string]bool{}
	var others []*corev1.Pod
	for _, n := range c.nodes {
		if !third[n.name] {
			continue
		}
		a := anti(n)
		var rest []*corev1.Pod
		for _, p := range n.pods {
			if p != a {
				rest = append(rest, p)
			}
		}
		if scenario == movable && a != nil && len(rest) > 0 && excess > 0 {
			deleted[a.Name] = true
			excess--
			rest = rest[1:] // the node's last pod stays
		}
		others = append(others, rest...)
	}
	for _, i := range c.rng.Perm(len(others))[:min(len(others), max(0, excess))] {
		deleted[others[i].Name] = true
	}
	c.deletePods(func(_ *refNode, p *corev1.Pod) bool { return !deleted[p.Name] })
	return c
}

// benchmarkConsolidation times one planning pass (Plan with the default
// methods: Emptiness, multi-node and single-node consolidation) over an
// input built beforehand, and reports what it decided.
func benchmarkConsolidation(b *testing.B, nodes, pods int, scenario string) {
	c := underutilized(b, nodes, pods, scenario, 1)
	in := c.input()
	now := refEpoch.Add(time.Hour)
	methods := disruption.Methods(disruption.Gates{})
	b.ReportAllocs()
	var d disruption.Decision
	start := time.Now()
	for b.Loop() {
		d = disruption.Plan(in, methods, now)
	}
	elapsed := time.Since(start)
	if d.Found == (scenario == fixedPoint) {
		b.Fatalf("%s: command found %v (%s of %d nodes); %d verdicts", scenario, d.Found, d.Command.Method, len(d.Command.Candidates), len(d.Verdicts))
	}
	b.ReportMetric(float64(len(in.Nodes)), "nodes")
	b.ReportMetric(float64(len(in.Pods)), "pods")
	b.ReportMetric(elapsed.Seconds()*1000/float64(b.N), "ms/op")
	b.ReportMetric(float64(len(d.Command.Candidates)), "candidates")
	b.ReportMetric(float64(len(d.Command.Replacements)), "replacements")
	// A verdict is a candidate single-node consolidation simulated and
	// turned down.
	b.ReportMetric(float64(len(d.Verdicts)), "verdicts")
	b.Logf("%s: %s of %d nodes, %d replacements, %d verdicts", scenario, d.Command.Method, len(d.Command.Candidates), len(d.Command.Replacements), len(d.Verdicts))
}

// slowBench names the environment variable that lets the 5,000-node
// fixed-point pass run: it takes about 18 minutes on 2 cores (every
// candidate is a full solve of the cluster), too long for make bench's
// 30-minute timeout on a shared machine.
const slowBench = "CAPSTAN_BENCH_SLOW"

func benchmarkScenarios(b *testing.B, nodes, pods int) {
	for _, s := range []string{movable, fixedPoint} {
		b.Run(s, func(b *testing.B) {
			if s == fixedPoint && nodes > 1000 && os.Getenv(slowBench) == "" {
				b.Skipf("about 18 minutes on 2 cores; set %s=1 to run it", slowBench)
			}
			benchmarkConsolidation(b, nodes, pods, s)
		})
	}
}

func BenchmarkConsolidation1000Nodes(b *testing.B) { benchmarkScenarios(b, 1000, 10000) }
func BenchmarkConsolidation5000Nodes(b *testing.B) { benchmarkScenarios(b, 5000, 50000) }

// BenchmarkConsolidationQuality runs the quality test's scenario (the
// reference workload of 1,000 pods solved, 70% of the pods deleted,
// consolidation to its fixed point under the default gates) and
// reports the cost it ends at against a fresh solve and the lower
// bound; ns/op is the whole run: the first solve, every planning pass
// and its command, and the fresh solve.
func BenchmarkConsolidationQuality(b *testing.B) {
	var r consolidationRun
	b.ReportAllocs()
	for b.Loop() {
		r = consolidate(b, 1000, 1, disruption.Gates{}, false, 500)
	}
	b.ReportMetric(r.after, "cost/h")
	b.ReportMetric(r.after/r.fresh, "cost/fresh")
	b.ReportMetric(r.after/r.bound, "cost/lowerbound")
	b.ReportMetric(float64(r.rounds), "commands")
}
