package simulator_test

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/simulator"
)

// forcefulHeader is an AWS-style cloud with one zone and a 30-second
// launch latency, its events (a "  events:" block, or ""), and the
// SimNodeClass the NodePools use.
func forcefulHeader(events string) string {
	return `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: forceful}
spec:
  region: us-east-1
  zones: [us-east-1a]
  style: aws
  launchLatency: 30s
` + events + `---
apiVersion: sim.capstan.dev/v1alpha1
kind: SimNodeClass
metadata: {name: default}
spec: {}
`
}

// templated is nodePoolYAML with fields (each a line indented six
// spaces: expireAfter, terminationGracePeriod) added to its
// spec.template.spec.
func templated(fields ...string) string {
	return strings.Replace(nodePoolYAML("default", ""), "      requirements:", strings.Join(fields, "")+"      requirements:", 1)
}

// spotPool is a NodePool of m6i.large, spot or on-demand (spot is the
// cheaper, so first), with the rebalance annotation when rebalance is
// set, and extra at spec level.
func spotPool(rebalance, extra string) string {
	np := nodePoolYAML("default", extra)
	np = strings.Replace(np, "[m6i.large, m6i.4xlarge]", "[m6i.large]", 1)
	np = strings.Replace(np, "values: [on-demand]", "values: [spot, on-demand]", 1)
	if rebalance != "" {
		np = strings.Replace(np, "metadata: {name: default}", "metadata: {name: default, annotations: {"+v1.RebalanceAnnotationKey+": "+rebalance+"}}", 1)
	}
	return np
}

// pinned makes a Deployment's pods do-not-disrupt, with a termination
// grace period of grace seconds.
func pinned(manifest, grace string) string {
	manifest = strings.Replace(manifest, "metadata: {labels: {app: web}}",
		"metadata: {labels: {app: web}, annotations: {karpenter.sh/do-not-disrupt: \"true\"}}", 1)
	return strings.Replace(manifest, "      containers:", "      terminationGracePeriodSeconds: "+grace+"\n      containers:", 1)
}

// noPendingBetween fails when a sample in [from, until) has pending
// pods; until 0 is the end of the run.
func noPendingBetween(t *testing.T, r *simulator.Result, from, until time.Duration) {
	t.Helper()
	for _, s := range r.Samples {
		if d := at(t, s.At); d >= from && (until == 0 || d < until) && s.PodsPending != 0 {
			t.Errorf("%d pods pending at %s; want none from %s", s.PodsPending, s.At, from)
		}
	}
}

// Each node expires an hour after its launch: it is deleted then (reason
// Expired, no budget, so no disruptedAt), drained at once, and the
// provisioner, woken by the deleting node, launches replacements in the
// same batch window; the pods run again once they register.
func TestExpiration(t *testing.T) {
	set := read(t, forcefulHeader("")+templated("      expireAfter: 1h\n")+deploymentYAML("web", 2, spread))
	r := run(t, set, func(o *simulator.Options) { o.Duration = 90 * time.Minute })
	first := nodesWhere(r, func(n simulator.Node) bool { return n.LaunchedAt == "1s" })
	if len(first) != 2 || len(r.Nodes) != 4 {
		t.Fatalf("nodes %+v; want two launched at 1s, each replaced once", r.Nodes)
	}
	expiry := time.Second + time.Hour
	for _, n := range first {
		if at(t, n.DeletedAt) != expiry || n.DeletionReason != "Expired" || n.DisruptedAt != "" || len(n.Pods) != 0 {
			t.Errorf("node %+v: want it drained and deleted at %s (its launch plus expireAfter), reason Expired, no disruptedAt", n, expiry)
		}
	}
	terminating := eventsOf(r, "DisruptionTerminating")
	if len(terminating) != 2 {
		t.Fatalf("DisruptionTerminating events %v, want one per expired node", terminating)
	}
	for _, e := range terminating {
		if at(t, e.At) != expiry || e.Message != "expired: lived for its expireAfter (1h0m0s): deleting the node" {
			t.Errorf("event %+v: want the expiry at %s", e, expiry)
		}
	}
	// The replacements launch one batch window (1s) after the deletion,
	// not after the drain; the pods are pending until they register.
	rep := nodesWhere(r, func(n simulator.Node) bool { return at(t, n.LaunchedAt) >= time.Hour })
	if len(rep) != 2 {
		t.Fatalf("nodes launched after 1h %+v, want 2", rep)
	}
	for _, n := range rep {
		if at(t, n.LaunchedAt) != expiry+time.Second || !alive(n) || len(n.Pods) != 1 {
			t.Errorf("replacement %+v: want it launched at %s and there at the end with one pod", n, expiry+time.Second)
		}
	}
	if p := sampleAt(t, r, expiry).PodsPending; p != 2 {
		t.Errorf("%d pods pending at the expiry, want the 2 evicted ones", p)
	}
	noPendingBetween(t, r, expiry+time.Second+30*time.Second, 0)
	if running(r) != 2 || r.Summary.PodsPending != 0 {
		t.Errorf("%d pods running, %d pending; want both running", running(r), r.Summary.PodsPending)
	}
}

// A pod the drain may not evict (do-not-disrupt, or a PDB allowing no
// disruption) holds the expired node until the NodeClaim's
// terminationGracePeriod: it is deleted then less its own grace period,
// and the instance goes. Without a terminationGracePeriod it holds the
// node for good.
func TestExpirationBlockedDrain(t *testing.T) {
	expiry := time.Second + time.Hour
	for _, tc := range []struct {
		name, grace, workload string
		// forcedAt is when the blocking pods are deleted, zero when never.
		forcedAt time.Duration
	}{
		// 30m after the expiry, less the pod's 120s.
		{"do-not-disrupt", "      terminationGracePeriod: 30m\n", pinned(deploymentYAML("web", 1, ""), "120"), expiry + 28*time.Minute},
		// Less the default 30s.
		{"a PDB", "      terminationGracePeriod: 30m\n", deploymentYAML("web", 2, "") + pdbYAML("web-pdb", "web", "minAvailable: 2"), expiry + 29*time.Minute + 30*time.Second},
		{"do-not-disrupt without terminationGracePeriod", "", pinned(deploymentYAML("web", 1, ""), "120"), 0},
		{"a PDB without terminationGracePeriod", "", deploymentYAML("web", 2, "") + pdbYAML("web-pdb", "web", "minAvailable: 2"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := read(t, forcefulHeader("")+templated("      expireAfter: 1h\n", tc.grace)+tc.workload)
			r := run(t, set, func(o *simulator.Options) { o.Duration = 105 * time.Minute })
			old := nodesWhere(r, func(n simulator.Node) bool { return n.LaunchedAt == "1s" })
			if len(old) != 1 {
				t.Fatalf("nodes launched at 1s %+v, want 1", old)
			}
			n := old[0]
			// Deleted at the expiry, whatever its pods say.
			if e := eventAt(t, r, "DisruptionTerminating", "node/"+n.Name); at(t, e.At) != expiry || !strings.HasPrefix(e.Message, "expired: ") {
				t.Errorf("event %+v: want the node deleted at its expiry %s", e, expiry)
			}
			// Its replacement launches then, for the pods that must leave.
			rep := nodesWhere(r, func(m simulator.Node) bool { return m.LaunchedAt != "1s" })
			if len(rep) != 1 || at(t, rep[0].LaunchedAt) != expiry+time.Second || !alive(rep[0]) {
				t.Fatalf("nodes launched after the first %+v: want one replacement launched at %s, there at the end", rep, expiry+time.Second)
			}
			// Still draining 20 minutes on: billed, its pods on it.
			if s := sampleAt(t, r, expiry+20*time.Minute); s.Nodes[v1.CapacityTypeOnDemand] != 2 || s.PodsPending != 0 {
				t.Errorf("sample at %s %+v: want both nodes, the expired one still draining, and nothing pending", s.At, s)
			}
			if tc.forcedAt == 0 {
				if !alive(n) || len(n.Pods) == 0 || len(rep[0].Pods) != 0 {
					t.Errorf("node %+v (replacement %+v): without a terminationGracePeriod want it kept with its pods, the replacement empty", n, rep[0])
				}
				if len(eventsOf(r, "NodeDeleted")) != 0 {
					t.Errorf("NodeDeleted events %v, want none", eventsOf(r, "NodeDeleted"))
				}
			} else {
				if at(t, n.DeletedAt) != tc.forcedAt || n.DeletionReason != "Expired" || n.DisruptedAt != "" || len(n.Pods) != 0 {
					t.Errorf("node %+v: want it gone at %s, when its pods were forced out, reason Expired", n, tc.forcedAt)
				}
				if at(t, n.DeletedAt) > expiry+30*time.Minute {
					t.Errorf("node gone at %s, after its terminationGracePeriod ended at %s", n.DeletedAt, expiry+30*time.Minute)
				}
				// The pods, recreated, run on the replacement (registered
				// long before).
				if len(rep[0].Pods) != running(r) {
					t.Errorf("replacement %+v: want every pod on it", rep[0])
				}
			}
			noPendingBetween(t, r, time.Minute, 0)
			if r.Summary.PodsPending != 0 || running(r) == 0 {
				t.Errorf("%d pods running, %d pending; want all running", running(r), r.Summary.PodsPending)
			}
		})
	}
}

// expireAfter: Never never deletes a node.
func TestExpireAfterNever(t *testing.T) {
	set := read(t, forcefulHeader("")+templated("      expireAfter: Never\n")+deploymentYAML("web", 2, spread))
	r := run(t, set, func(o *simulator.Options) { o.Duration = 3 * time.Hour })
	if len(r.Nodes) != 2 || len(nodesWhere(r, alive)) != 2 {
		t.Errorf("nodes %+v; want both kept for the whole run", r.Nodes)
	}
	if e := eventsOf(r, "DisruptionTerminating"); len(e) != 0 {
		t.Errorf("DisruptionTerminating events %v, want none", e)
	}
	if running(r) != 2 || r.Summary.PodsPending != 0 {
		t.Errorf("%d pods running, %d pending; want both running", running(r), r.Summary.PodsPending)
	}
}

// A spot interruption at 30m (two minutes' notice): the nodes are deleted
// at the notice (reason Interrupted), their replacements launched then,
// not at the deadline; spot m6i.large in the zone is unavailable for the
// 3-minute TTL (a scale-up at 32m gets on-demand, one at 34m spot again);
// the notice is reported once per node, though the cloud repeats it
// while the instance runs. A PDB allowing no eviction holds the drain
// until the deadline less the pods' grace period.
//
// The NodePool turns ReturnToPreferred off: the on-demand nodes launched
// at 30m1s and 32m1s fell back from spot and would otherwise return to
// it from 43m15s (10m after the mark ends at 33m0s), one at a time.
// That is not what this test is about, and kept, they show the TTL's
// effect to the end. Returns after an interruption are asserted by
// TestExampleGCPStyleSpot, returns after a shortage by
// TestExampleSpotShortageReturnsToSpot.
func TestSpotInterruption(t *testing.T) {
	const notice = 30 * time.Minute
	profile := forcefulHeader(`  events:
  - {at: 30m, type: SpotInterruption, instanceType: m6i.large, zone: us-east-1a}
  - {at: 32m, type: Scale, workload: default/web, replicas: 3}
  - {at: 34m, type: Scale, workload: default/web, replicas: 4}
`)
	for _, tc := range []struct {
		name, extra string
		// gone is when the interrupted instances are terminated.
		gone time.Duration
	}{
		{"drained at once", "", notice},
		// The deadline 32m0s less the pods' default 30s.
		{"a PDB holds the drain to the deadline", pdbYAML("web-pdb", "web", "minAvailable: 2"), notice + 90*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := strings.Replace(spotPool("", "  disruption: {consolidateAfter: Never}\n"), "metadata: {name: default}",
				"metadata: {name: default, annotations: {"+v1.ReturnToPreferredAnnotationKey+": "+v1.ReturnToPreferredDisabled+"}}", 1)
			set := read(t, profile+pool+deploymentYAML("web", 2, spread)+tc.extra)
			r := run(t, set, func(o *simulator.Options) { o.Duration = time.Hour })
			first := nodesWhere(r, func(n simulator.Node) bool { return n.LaunchedAt == "1s" })
			if len(first) != 2 {
				t.Fatalf("nodes launched at 1s %+v, want 2", first)
			}
			var objects []string
			for _, n := range first {
				if n.CapacityType != v1.CapacityTypeSpot || at(t, n.DeletedAt) != tc.gone || n.DeletionReason != "Interrupted" || n.DisruptedAt != "" || len(n.Pods) != 0 {
					t.Errorf("node %+v: want a spot node drained and gone at %s, reason Interrupted, no disruptedAt", n, tc.gone)
				}
				if e := eventAt(t, r, "DisruptionTerminating", "node/"+n.Name); at(t, e.At) != notice || e.Message != "interrupted (SpotInterruption): deleting the node" {
					t.Errorf("event %+v: want the node deleted at the notice", e)
				}
				objects = append(objects, "node/"+n.Name)
			}
			notices := eventsOf(r, "SpotInterruption")
			if len(notices) != 2 {
				t.Fatalf("SpotInterruption events %v, want one per interrupted node", notices)
			}
			for i, e := range notices {
				if at(t, e.At) != notice || e.Object != objects[i] || !strings.HasSuffix(e.Message, "(in 2m0s); draining it now and launching replacements") {
					t.Errorf("notice %+v: want it at 30m on %s, acted on at once", e, objects[i])
				}
			}
			// Replacements at the notice, on-demand: the spot offering is
			// marked unavailable.
			for _, want := range []struct {
				launched     time.Duration
				count        int
				capacityType string
			}{
				{notice + time.Second, 2, v1.CapacityTypeOnDemand},
				{32*time.Minute + time.Second, 1, v1.CapacityTypeOnDemand},
				{34*time.Minute + time.Second, 1, v1.CapacityTypeSpot},
			} {
				nodes := nodesWhere(r, func(n simulator.Node) bool { return at(t, n.LaunchedAt) == want.launched })
				if len(nodes) != want.count {
					t.Errorf("nodes launched at %s %+v, want %d", want.launched, nodes, want.count)
				}
				for _, n := range nodes {
					if n.CapacityType != want.capacityType || !alive(n) || len(n.Pods) != 1 {
						t.Errorf("node %+v launched at %s: want it %s, there at the end with one pod", n, want.launched, want.capacityType)
					}
				}
			}
			if len(r.Nodes) != 6 {
				t.Errorf("%d nodes launched, want 6: 2, their 2 replacements, one per scale-up", len(r.Nodes))
			}
			if d := append(eventsOf(r, "DisruptionLaunching"), eventsOf(r, "DisruptionBlocked")...); len(d) != 0 {
				t.Errorf("disruption events %v, want none: ReturnToPreferred is off, consolidation never", d)
			}
			// Within the TTL nothing launches as spot in the zone.
			for _, n := range r.Nodes {
				if l := at(t, n.LaunchedAt); l >= notice && l < notice+3*time.Minute && n.CapacityType == v1.CapacityTypeSpot && n.Zone == first[0].Zone {
					t.Errorf("node %+v: spot %s in %s launched within the unavailable-offerings TTL", n, n.InstanceType, n.Zone)
				}
			}
			if f := eventsOf(r, "InsufficientCapacity"); len(f) != 0 {
				t.Errorf("launch failures %v: the interrupted offering is skipped, not tried", f)
			}
			// Drained at once, the pods wait for the replacements to
			// register (30s); held by the PDB, they move when those are up.
			// (The scale-ups' new pods wait for their nodes.)
			if tc.gone == notice {
				if p := sampleAt(t, r, notice).PodsPending; p != 2 {
					t.Errorf("%d pods pending at the notice, want the 2 evicted", p)
				}
				noPendingBetween(t, r, notice+31*time.Second, 32*time.Minute)
			} else {
				noPendingBetween(t, r, time.Minute, 32*time.Minute)
			}
			if running(r) != 4 || r.Summary.PodsPending != 0 {
				t.Errorf("%d pods running, %d pending; want all 4 running", running(r), r.Summary.PodsPending)
			}
		})
	}
}

// A rebalance recommendation at 30m is an event only, unless the NodePool
// is annotated capstan.dev/rebalance: replace: then the node is replaced
// ahead of time, pre-spun, by ExpectedInterruption within the Drifted
// budget, which a budget of 0 for Drifted blocks.
func TestRebalanceRecommendation(t *testing.T) {
	const notice = 30 * time.Minute
	profile := forcefulHeader("  events:\n  - {at: 30m, type: RebalanceRecommendation, instanceType: m6i.large, zone: us-east-1a}\n")
	for _, tc := range []struct {
		name, rebalance, extra string
		message                string
		replaced               bool
		blocked                string
	}{
		{"not opted in", "", "", "elevated risk of spot interruption; no action (the NodePool does not opt into replacing on rebalance recommendations)", false, ""},
		{"replace", v1.RebalanceReplace, "",
			"elevated risk of spot interruption: the instance is at risk; replacing it ahead of time within the Drifted budget", true, ""},
		{"replace with a Drifted budget of 0", v1.RebalanceReplace, "  disruption:\n    budgets: [{nodes: \"0\", reasons: [Drifted]}]\n",
			"elevated risk of spot interruption: the instance is at risk; replacing it ahead of time within the Drifted budget", false, "disruption budget of 0 for Drifted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := read(t, profile+spotPool(tc.rebalance, tc.extra)+deploymentYAML("web", 2, ""))
			r := run(t, set, func(o *simulator.Options) { o.Duration = time.Hour })
			first := nodesWhere(r, func(n simulator.Node) bool { return n.LaunchedAt == "1s" })
			if len(first) != 1 || first[0].CapacityType != v1.CapacityTypeSpot {
				t.Fatalf("nodes launched at 1s %+v, want one spot node", first)
			}
			n := first[0]
			notices := eventsOf(r, "RebalanceRecommendation")
			if len(notices) != 1 || at(t, notices[0].At) != notice || notices[0].Object != "node/"+n.Name || notices[0].Message != tc.message {
				t.Errorf("notices %+v: want one at 30m on node/%s: %q", notices, n.Name, tc.message)
			}
			if len(eventsOf(r, "SpotInterruption")) != 0 || len(eventsOf(r, "InsufficientCapacity")) != 0 {
				t.Errorf("events %v: a recommendation interrupts nothing", r.Events)
			}
			// No pod waits: the old node keeps its pods until a
			// replacement is registered.
			noPendingBetween(t, r, time.Minute, 0)
			if running(r) != 2 || r.Summary.PodsPending != 0 {
				t.Errorf("%d pods running, %d pending; want both running", running(r), r.Summary.PodsPending)
			}
			if !tc.replaced {
				if len(r.Nodes) != 1 || !alive(n) || len(n.Pods) != 2 || n.DisruptedAt != "" {
					t.Errorf("nodes %+v: want the one node kept with its pods", r.Nodes)
				}
				blocked := eventsOf(r, "DisruptionBlocked")
				if tc.blocked == "" && len(blocked) != 0 {
					t.Errorf("verdicts %v, want none", blocked)
				}
				if tc.blocked != "" && (len(blocked) == 0 || blocked[0].Message != tc.blocked || at(t, blocked[0].At) != notice) {
					t.Errorf("verdicts %v, want %q from 30m", blocked, tc.blocked)
				}
				return
			}
			if len(r.Nodes) != 2 {
				t.Fatalf("nodes %+v, want the first and its replacement", r.Nodes)
			}
			rep := r.Nodes[1]
			disrupted := at(t, n.DisruptedAt)
			// Decided at the notice, launched after the validation delay.
			if disrupted < notice || disrupted > notice+time.Minute || rep.LaunchedAt != n.DisruptedAt {
				t.Errorf("node disrupted at %q, replacement launched at %q; want the replacement launched when the node is disrupted, soon after 30m", n.DisruptedAt, rep.LaunchedAt)
			}
			if n.DeletionReason != "Drifted" || at(t, n.DeletedAt) <= at(t, rep.LaunchedAt) || len(n.Pods) != 0 {
				t.Errorf("node %+v: want it deleted (Drifted) after its replacement launched, drained", n)
			}
			if !alive(rep) || len(rep.Pods) != 2 || rep.DeletedAt != "" {
				t.Errorf("replacement %+v: want it there at the end with both pods", rep)
			}
			if l := eventsOf(r, "DisruptionLaunching"); len(l) != 1 || l[0].Message != "ExpectedInterruption (Drifted): launching replacement nodeclaim "+rep.NodeClaim {
				t.Errorf("DisruptionLaunching events %v: want one by ExpectedInterruption for %s", l, rep.NodeClaim)
			}
		})
	}
}
