package provisioning

import (
	"slices"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Prepared is what solves over one snapshot share: each NodePool's and
// each node's data, worked out once by Prepare and never changed after
// (a solve copies what it changes), so any number of solves may read one,
// in turn or at once. Disruption solves one snapshot once per candidate,
// each time without a few of its nodes; with Prepared a solve costs in
// proportion to what it places and counts, not to the cluster's instance
// types and nodes. Only Inputs with the same NodePools, InstanceTypes,
// DaemonSetPods and Namespaces as the one prepared may use it (any subset
// of the same Nodes, or other nodes, which are worked out in the solve).
// The caller that prepares owns it: disruption.NewInput prepares each
// input it builds.
type Prepared struct {
	pools map[*v1.NodePool]*poolData
	nodes map[*Node]*nodeData
}

// Prepare works out in's NodePools' and nodes' data, for the solves over
// in (and subsets of its nodes) to share.
func Prepare(in Input) *Prepared {
	memo := newTypesMemo(daemonData(in))
	p := &Prepared{pools: make(map[*v1.NodePool]*poolData, len(in.NodePools)), nodes: make(map[*Node]*nodeData, len(in.Nodes))}
	for _, np := range in.NodePools {
		if !solvedFor(np) {
			continue
		}
		p.pools[np] = newPoolData(np, in.InstanceTypes[np.Name], memo)
	}
	for _, n := range in.Nodes {
		p.nodes[n] = newNodeData(n, memo.daemons)
	}
	return p
}

// pool is np's data for this solve: a copy, as a solve spends its
// limits.
func (p *Prepared) pool(np *v1.NodePool, build func() *poolData) *poolData {
	if p == nil {
		return build()
	}
	d, ok := p.pools[np]
	if !ok {
		return build()
	}
	cp := *d
	return &cp
}

// node is n's data and whether it is shared: a solve copies a shared
// one before it places a pod there (solver.own), as most solves place
// pods on few of the nodes they read.
func (p *Prepared) node(n *Node, build func() *nodeData) (*nodeData, bool) {
	if p == nil {
		return build(), false
	}
	d, ok := p.nodes[n]
	if !ok {
		return build(), false
	}
	return d, true
}

// own is s.nodes[i] for the solve to fill, copied first when shared
// (its host ports clipped, so appending never writes into the shared
// ones).
func (s *solver) own(i int) *nodeData {
	if s.shared[i] {
		cp := *s.nodes[i]
		cp.hostPorts = slices.Clip(cp.hostPorts)
		s.nodes[i], s.shared[i] = &cp, false
	}
	return s.nodes[i]
}
