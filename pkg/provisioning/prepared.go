package provisioning

import (
	"slices"
	"sync"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Prepared is what solves over one snapshot share: each NodePool's and
// each node's data, worked out by the first solve that needs it and
// copied for the others. Disruption solves one snapshot once per
// candidate, each time without a few of its nodes; with Prepared a solve
// costs in proportion to what it places and counts, not to the cluster's
// instance types and nodes. Only Inputs with the same NodePools,
// InstanceTypes and DaemonSetPods may share one (any subset of the same
// Nodes); state.Build gives each snapshot its own.
type Prepared struct {
	mu    sync.Mutex
	pools map[*v1.NodePool]*poolData
	nodes map[*Node]*nodeData
}

// NewPrepared is an empty Prepared for one snapshot.
func NewPrepared() *Prepared {
	return &Prepared{pools: map[*v1.NodePool]*poolData{}, nodes: map[*Node]*nodeData{}}
}

// pool is np's data for this solve: a copy, as a solve spends its
// limits.
func (p *Prepared) pool(np *v1.NodePool, build func() *poolData) *poolData {
	if p == nil {
		return build()
	}
	p.mu.Lock()
	d, ok := p.pools[np]
	if !ok {
		d = build()
		p.pools[np] = d
	}
	p.mu.Unlock()
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
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.nodes[n]
	if !ok {
		d = build()
		p.nodes[n] = d
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
