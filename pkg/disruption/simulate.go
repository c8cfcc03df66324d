package disruption

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"

	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Simulation is where candidates' pods would go without them: onto other
// nodes' free capacity, plus the replacements to launch for the rest;
// Unplaced pods fit nowhere, so the candidates must stay.
type Simulation struct {
	Replacements []*provisioning.NodeClaim
	Unplaced     []provisioning.Unplaced
}

func simulator(in Input, keepPreferences bool) func([]Candidate) Simulation {
	return func(cs []Candidate) Simulation {
		snapshot := in.Snapshot
		snapshot.Input.Options.KeepPreferences = keepPreferences
		return Simulate(snapshot, cs)
	}
}

// Simulate solves the candidates' pods, as pending copies, over the
// snapshot's nodes without the candidates: the same solver provisioning
// uses, so replacements are what the provisioner would launch. Pending
// pods are left to the provisioner: counting them here would launch
// their capacity twice.
func Simulate(snapshot state.Snapshot, cs []Candidate) Simulation {
	return simulate(snapshot, cs, func(*corev1.Pod) {})
}

// inPlace asks whether a candidate's pods fit one new node of their own
// in the zone they run in, keeping their preferences. The solve's greedy
// placement may move some onto other nodes' free room, shifting zone
// spread counts so that the rest need new nodes in two zones; all of
// them on one node in their own zone leaves every count as it was.
func inPlace(in Input) func(Candidate) Simulation {
	return func(c Candidate) Simulation {
		snapshot := in.Snapshot
		snapshot.Input.Options.KeepPreferences = true
		snapshot.Input.Options.NewCapacityOnly = true
		zone, ok := c.Node.Labels[v1.LabelZone]
		return simulate(snapshot, []Candidate{c}, func(p *corev1.Pod) {
			if !ok {
				return
			}
			if p.Spec.NodeSelector == nil {
				p.Spec.NodeSelector = map[string]string{}
			}
			p.Spec.NodeSelector[v1.LabelZone] = zone
		})
	}
}

// simulate is Simulate with each pending copy changed by pin.
func simulate(snapshot state.Snapshot, cs []Candidate, pin func(*corev1.Pod)) Simulation {
	gone := map[string]bool{}
	var pods []*corev1.Pod
	for _, c := range cs {
		gone[c.Node.Name] = true
		for _, p := range c.Pods {
			cp := p.DeepCopy()
			cp.Spec.NodeName = ""
			pin(cp)
			pods = append(pods, cp)
		}
	}
	if len(pods) == 0 {
		return Simulation{}
	}
	in := snapshot.Input
	in.Pods = pods
	in.Nodes = make([]*provisioning.Node, 0, len(snapshot.Input.Nodes))
	for _, n := range snapshot.Input.Nodes {
		if !gone[n.Name] {
			in.Nodes = append(in.Nodes, n)
		}
	}
	res := provisioning.Solve(in)
	return Simulation{Replacements: res.NewNodeClaims, Unplaced: res.Unplaced}
}

// nominatedNodes are the existing nodes the snapshot's pending pods
// (those of deleting nodes included) would be placed on: disrupting one
// would take the capacity they are waiting for.
func nominatedNodes(snapshot state.Snapshot) map[string]bool {
	if len(snapshot.Input.Pods) == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, n := range provisioning.Solve(snapshot.Input).Nominations {
		out[n.NodeName] = true
	}
	return out
}
