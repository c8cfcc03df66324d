package disruption

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/capstan-dev/capstan/api/v1"

	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Simulation is where candidates' pods would go without them: onto other
// nodes' free capacity, plus the replacements to launch for the rest;
// Unplaced pods fit nowhere, so the candidates must stay.
type Simulation struct {
	Replacements []*provisioning.NodeClaim
	Unplaced     []provisioning.Unplaced
}

// simulator simulates over in's snapshot, placing no pod on the nodes
// settling names.
func simulator(in Input, keepPreferences bool, settling map[string]bool) func([]Candidate) Simulation {
	return func(cs []Candidate) Simulation {
		snapshot := in.Snapshot
		snapshot.Input.Options.KeepPreferences = keepPreferences
		if len(settling) > 0 {
			snapshot.Input.Nodes = closed(snapshot.Input.Nodes, settling)
		}
		return Simulate(snapshot, cs)
	}
}

// closed are nodes with those named by names taking no new pods, as a
// deleting node takes none; they still count for topology and limits.
func closed(nodes []*provisioning.Node, names map[string]bool) []*provisioning.Node {
	out := make([]*provisioning.Node, len(nodes))
	for i, n := range nodes {
		out[i] = n
		if names[n.Name] && !n.Deleting {
			cp := *n
			cp.Deleting = true
			out[i] = &cp
		}
	}
	return out
}

// UnderConsolidateAfter are the nodes, by name, still inside their
// NodePool's consolidateAfter at now: initialized, with a consolidateAfter
// neither zero nor Never that has not passed since their last pod event
// (else their initialization). Consolidation moves no pod onto them: a
// node just launched, or whose pods just changed, is left to settle
// before it is packed (the reference's v1.14
// pkg/utils/disruption/disruption.go, IsUnderConsolidateAfter).
// Pending pods, which consolidation's simulations leave to the
// provisioner, may still go there.
func UnderConsolidateAfter(in Input, now time.Time) map[string]bool {
	pools := map[string]*v1.NodePool{}
	for _, np := range in.NodePools {
		pools[np.Name] = np
	}
	out := map[string]bool{}
	for _, nc := range in.NodeClaims {
		np := pools[nc.Labels[v1.NodePoolLabelKey]]
		if np == nil || nc.Status.NodeName == "" || !meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeInitialized) {
			continue
		}
		if at, ok := ConsolidatableAt(nc, np); ok && now.Before(at) {
			out[nc.Status.NodeName] = true
		}
	}
	return out
}

// Simulate solves the candidates' pods, as pending copies, over the
// snapshot's nodes without the candidates: the same solver provisioning
// uses, so replacements are what the provisioner would launch. Pending
// pods are left to the provisioner: counting them here would launch
// their capacity twice; so are the snapshot's virtual pods, whatever
// snapshot it is given.
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
	// The copies request by term what the pods they copy do (llmaz
	// flavors, scaleup.PinFlavors).
	var termRequests map[*corev1.Pod][]scheduling.Resources
	for _, c := range cs {
		gone[c.Node.Name] = true
		for _, p := range c.Pods {
			cp := p.DeepCopy()
			cp.Spec.NodeName = ""
			pin(cp)
			pods = append(pods, cp)
			if tr, ok := snapshot.Input.TermRequests[p]; ok {
				if termRequests == nil {
					termRequests = map[*corev1.Pod][]scheduling.Resources{}
				}
				termRequests[cp] = tr
			}
		}
	}
	if len(pods) == 0 {
		return Simulation{}
	}
	in := snapshot.Input
	in.Pods, in.TermRequests = pods, termRequests
	// Only the candidates' pods move. The snapshot's virtual pods are not
	// theirs: those that fit now are on their nodes already (placeVirtual)
	// and move as a candidate's pods, those that fit nowhere hold nothing
	// and block no command (docs/batch.md, "Capacity buffers").
	in.Holding, in.Yielding = nil, nil
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
	// Only real pending pods nominate a node (see simulate).
	in := snapshot.Input
	in.Holding, in.Yielding = nil, nil
	out := map[string]bool{}
	for _, n := range provisioning.Solve(in).Nominations {
		out[n.NodeName] = true
	}
	return out
}
