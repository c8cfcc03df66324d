package disruption_test

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The reference workload (../shared/design/benchmark-workload.md): the
// catalog is test.ReferenceInstanceTypes; pods in five shapes (generic,
// zone spread, hostname spread, zone self-affinity, hostname
// anti-affinity).

var refEpoch = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// refNodePool is the benchmark's NodePool (no requirements, huge limits),
// consolidating underutilized nodes at once, all of them if need be.
func refNodePool() *v1.NodePool {
	return test.NodePool(func(np *v1.NodePool) {
		np.Name = "default"
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("10000000"), corev1.ResourceMemory: resource.MustParse("10000000Gi")}
		np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("0s")
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "100%"}}
	})
}

var (
	refCPU = []string{"100m", "250m", "500m", "1000m", "1500m"}
	refMem = []string{"100Mi", "256Mi", "512Mi", "1024Mi", "2048Mi", "4096Mi"}
)

func refLetter(rng *rand.Rand) string { return string(rune('a' + rng.IntN(7))) }

// refPods are n pods of the reference shapes: anti of them hostname
// anti-affine (app=nginx), the rest in four equal groups (generic, zone
// spread, hostname spread, zone self-affinity), the remainder generic.
// The reference workload is anti = n/5.
func refPods(n, anti int, rng *rand.Rand) []*corev1.Pod {
	group := (n - anti) / 4
	out := make([]*corev1.Pod, 0, n)
	for i := range n {
		p := test.Pod("default", func(p *corev1.Pod) {
			p.Name = fmt.Sprintf("p%d", i)
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(refCPU[rng.IntN(len(refCPU))]),
				corev1.ResourceMemory: resource.MustParse(refMem[rng.IntN(len(refMem))]),
			}
		})
		spread := func(key string) []corev1.TopologySpreadConstraint {
			return []corev1.TopologySpreadConstraint{{TopologyKey: key, MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"my-label": refLetter(rng)}}}}
		}
		switch {
		case i >= n-anti:
			p.Labels = map[string]string{"app": "nginx"}
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}}}}}
		case i < group || i >= 4*group:
			p.Labels = map[string]string{"my-label": refLetter(rng)}
		case i < 2*group:
			p.Labels = map[string]string{"my-label": refLetter(rng)}
			p.Spec.TopologySpreadConstraints = spread(v1.LabelZone)
		case i < 3*group:
			p.Labels = map[string]string{"my-label": refLetter(rng)}
			p.Spec.TopologySpreadConstraints = spread(corev1.LabelHostname)
		default:
			l := refLetter(rng)
			p.Labels = map[string]string{"my-affinity": l}
			p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: v1.LabelZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"my-affinity": l}}}}}}
		}
		out = append(out, p)
	}
	return out
}

// refNode is a launched node of a refCluster with the pods bound to it.
type refNode struct {
	name     string
	it       *cloudprovider.InstanceType
	offering *cloudprovider.Offering
	labels   map[string]string
	pods     []*corev1.Pod
}

// refCluster is an in-memory cluster of one NodePool over the reference
// catalog: nodes launched from solved NodeClaims, pods bound to them.
type refCluster struct {
	pool  *v1.NodePool
	its   []*cloudprovider.InstanceType
	nodes []*refNode
	rng   *rand.Rand
	seq   int
}

func newRefCluster(seed uint64) *refCluster {
	return &refCluster{pool: refNodePool(), its: test.ReferenceInstanceTypes(), rng: rand.New(rand.NewPCG(seed, seed^0xc0de))}
}

// solve places pods on an empty cluster of the reference catalog, as the
// provisioner would.
func (c *refCluster) solve(pods []*corev1.Pod) provisioning.Result {
	return provisioning.Solve(provisioning.Input{Pods: pods, NodePools: []*v1.NodePool{c.pool},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{c.pool.Name: c.its}})
}

// provision solves pods on an empty cluster and launches every NodeClaim.
func (c *refCluster) provision(tb testing.TB, pods []*corev1.Pod) {
	tb.Helper()
	r := c.solve(pods)
	if len(r.Unplaced) > 0 {
		tb.Fatalf("%d pods unplaced, first %s: %s", len(r.Unplaced), r.Unplaced[0].Reason, r.Unplaced[0].Message)
	}
	for _, nc := range r.NewNodeClaims {
		c.launch(nc, nc.Pods)
	}
}

// launch starts a node for a planned NodeClaim, with pods bound: the
// claim's cheapest option, at the cheapest available offering its
// requirements allow in its expected capacity type (any other capacity
// type if none), ties broken at random as the cloud would.
func (c *refCluster) launch(nc *provisioning.NodeClaim, pods []*corev1.Pod) *refNode {
	it := nc.InstanceTypes[0]
	var best []*cloudprovider.Offering
	for _, pass := range []bool{true, false} {
		for _, o := range it.Offerings {
			if !o.IsAvailable() || !o.CompatibleWith(nc.Requirements) || pass && o.CapacityType != nc.CapacityType {
				continue
			}
			switch {
			case len(best) == 0 || o.Price < best[0].Price:
				best = []*cloudprovider.Offering{o}
			case o.Price == best[0].Price:
				best = append(best, o)
			}
		}
		if len(best) > 0 {
			break
		}
	}
	o := best[c.rng.IntN(len(best))]
	c.seq++
	n := &refNode{name: fmt.Sprintf("node-%d", c.seq), it: it, offering: o}
	n.labels = it.Requirements.Labels()
	maps.Copy(n.labels, nc.Requirements.Labels())
	maps.Copy(n.labels, nc.Labels)
	maps.Copy(n.labels, map[string]string{
		v1.LabelInstanceType: it.Name, v1.LabelZone: o.Zone, v1.CapacityTypeLabelKey: o.CapacityType,
		corev1.LabelHostname: n.name, v1.NodePoolLabelKey: c.pool.Name,
	})
	for _, p := range pods {
		n.bind(p)
	}
	c.nodes = append(c.nodes, n)
	return n
}

func (n *refNode) bind(p *corev1.Pod) {
	cp := p.DeepCopy()
	cp.Spec.NodeName = n.name
	n.pods = append(n.pods, cp)
}

// pods are every pod bound in the cluster.
func (c *refCluster) pods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, n := range c.nodes {
		out = append(out, n.pods...)
	}
	return out
}

// pending are copies of the cluster's pods, unbound.
func pending(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
		out[i].Spec.NodeName = ""
	}
	return out
}

// deletePods removes the pods keep refuses.
func (c *refCluster) deletePods(keep func(n *refNode, p *corev1.Pod) bool) {
	for _, n := range c.nodes {
		n.pods = slices.DeleteFunc(n.pods, func(p *corev1.Pod) bool { return !keep(n, p) })
	}
}

// cost is what the cluster's nodes cost an hour.
func (c *refCluster) cost() float64 {
	total := 0.0
	for _, n := range c.nodes {
		total += n.offering.Price
	}
	return total
}

// input is the disruption view of the cluster: each node initialized and
// Ready with a launched NodeClaim labelled with its instance type, zone
// and capacity type (so its price is known), created at refEpoch.
func (c *refCluster) input() disruption.Input {
	objs := state.Objects{NodePools: []v1.NodePool{*c.pool}}
	objs.NodeClaims = make([]v1.NodeClaim, 0, len(c.nodes))
	objs.Nodes = make([]corev1.Node, 0, len(c.nodes))
	for _, n := range c.nodes {
		providerID := "sim://" + n.name
		objs.NodeClaims = append(objs.NodeClaims, v1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "nc-" + n.name, CreationTimestamp: metav1.NewTime(refEpoch), Labels: map[string]string{
				v1.NodePoolLabelKey: c.pool.Name, v1.LabelInstanceType: n.it.Name, v1.LabelZone: n.offering.Zone, v1.CapacityTypeLabelKey: n.offering.CapacityType,
			}},
			Spec: v1.NodeClaimSpec{NodeClassRef: c.pool.Spec.Template.Spec.NodeClassRef},
			Status: v1.NodeClaimStatus{NodeName: n.name, ProviderID: providerID, Capacity: n.it.Capacity, Allocatable: n.it.Allocatable(),
				Conditions: []metav1.Condition{
					{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue},
					{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue},
				}},
		})
		objs.Nodes = append(objs.Nodes, corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: n.labels},
			Spec:       corev1.NodeSpec{ProviderID: providerID},
			Status: corev1.NodeStatus{Capacity: n.it.Capacity, Allocatable: n.it.Allocatable(),
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		})
		for _, p := range n.pods {
			objs.Pods = append(objs.Pods, *p)
		}
	}
	snapshot := state.Build(objs, map[string][]*cloudprovider.InstanceType{c.pool.Name: c.its}, []string{corev1.DefaultSchedulerName})
	return disruption.NewInput(objs, snapshot, disruption.Policies{})
}

// apply carries out a command on the cluster: the candidates' pods go
// where the simulation that judged it put them (existing nodes, or the
// replacement, launched as its cheapest option), then the candidates go.
// The placement is solved again exactly as disruption.Simulate does; a
// different outcome fails the test.
func (c *refCluster) apply(tb testing.TB, in disruption.Input, cmd disruption.Command) {
	tb.Helper()
	gone := map[string]bool{}
	var pods []*corev1.Pod
	for _, cand := range cmd.Candidates {
		gone[cand.Node.Name] = true
		pods = append(pods, pending(cand.Pods)...)
	}
	sin := in.Snapshot.Input
	sin.Options.KeepPreferences = true // as consolidation's judge simulates
	sin.Pods = pods
	sin.Nodes = nil
	for _, n := range in.Snapshot.Input.Nodes {
		if !gone[n.Name] {
			sin.Nodes = append(sin.Nodes, n)
		}
	}
	r := provisioning.Solve(sin)
	// The pods are bound as they are: the judge's second try pins copies
	// to a zone only to solve, and a pod's spec does not change.
	unpinned := map[string]*corev1.Pod{}
	for _, p := range pods {
		unpinned[p.Namespace+"/"+p.Name] = p
	}
	if len(r.NewNodeClaims) > 1 && len(cmd.Candidates) == 1 && len(cmd.Replacements) == 1 {
		// The judge's second try: all the pods on one new node in the
		// candidate's zone.
		zone := cmd.Candidates[0].Node.Labels[v1.LabelZone]
		sin.Pods = pending(pods)
		for _, p := range sin.Pods {
			if p.Spec.NodeSelector == nil {
				p.Spec.NodeSelector = map[string]string{}
			}
			p.Spec.NodeSelector[v1.LabelZone] = zone
		}
		sin.Options.NewCapacityOnly = true
		r = provisioning.Solve(sin)
	}
	if len(r.Unplaced) > 0 || len(r.NewNodeClaims) != len(cmd.Replacements) {
		tb.Fatalf("%s of %v: re-solving gives %d unplaced and %d new nodes, the command %d replacements",
			cmd.Method, cmd.Names(), len(r.Unplaced), len(r.NewNodeClaims), len(cmd.Replacements))
	}
	byName := map[string]*refNode{}
	for _, n := range c.nodes {
		byName[n.name] = n
	}
	for _, nom := range r.Nominations {
		byName[nom.NodeName].bind(unpinned[nom.Pod.Namespace+"/"+nom.Pod.Name])
	}
	for i, rep := range cmd.Replacements {
		if got, want := podKeys(r.NewNodeClaims[i].Pods), podKeys(rep.Pods); !slices.Equal(got, want) {
			tb.Fatalf("%s of %v: the replacement's pods differ on re-solving: %v, want %v", cmd.Method, cmd.Names(), got, want)
		}
		bound := make([]*corev1.Pod, len(rep.Pods))
		for j, p := range rep.Pods {
			bound[j] = unpinned[p.Namespace+"/"+p.Name]
		}
		c.launch(rep, bound)
	}
	c.nodes = slices.DeleteFunc(c.nodes, func(n *refNode) bool { return gone[n.name] })
}

func podKeys(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Namespace + "/" + p.Name
	}
	slices.Sort(out)
	return out
}

// freshCost is the hourly price of solving pods on an empty cluster:
// each NodeClaim's cheapest option at its cheapest offering, as
// pkg/provisioning's benchmarks count it. The pods are solved in name
// order: the solve breaks ties by input order, and runs that leave the
// same pods on different nodes must be compared with the same solve.
func (c *refCluster) freshCost(tb testing.TB, pods []*corev1.Pod) (float64, int) {
	tb.Helper()
	ps := pending(pods)
	slices.SortFunc(ps, func(a, b *corev1.Pod) int { return cmp.Compare(a.Name, b.Name) })
	r := c.solve(ps)
	if len(r.Unplaced) > 0 {
		tb.Fatalf("fresh solve: %d pods unplaced", len(r.Unplaced))
	}
	total := 0.0
	for _, nc := range r.NewNodeClaims {
		best := -1.0
		for _, o := range nc.InstanceTypes[0].Offerings {
			if o.IsAvailable() && o.CompatibleWith(nc.Requirements) && (best < 0 || o.Price < best) {
				best = o.Price
			}
		}
		total += best
	}
	return total, len(r.NewNodeClaims)
}
