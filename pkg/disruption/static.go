package disruption

import (
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// StaticCounts are a static NodePool's NodeClaims as the reference's
// NodePool state counts them (pkg/controllers/state/statenodepool.go):
// Active, neither deleting nor being replaced by a disruption command;
// Deleting; Pending, taken by a command (their node carries the
// disrupted taint) and not deleted yet. Active keeps those it counted.
type StaticCounts struct {
	Active            []*v1.NodeClaim
	Deleting, Pending int64
}

// CountStatic counts the NodeClaims of np among claims; nodes are by name.
func CountStatic(np *v1.NodePool, claims []*v1.NodeClaim, nodes map[string]*corev1.Node) StaticCounts {
	var c StaticCounts
	taint := v1.DisruptedNoScheduleTaint()
	for _, nc := range claims {
		if nc.Labels[v1.NodePoolLabelKey] != np.Name {
			continue
		}
		n := nodes[nc.Status.NodeName]
		switch {
		case nc.DeletionTimestamp != nil:
			c.Deleting++
		case n != nil && slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) }):
			c.Pending++
		default:
			c.Active = append(c.Active, nc)
		}
	}
	return c
}

// Room is how many more NodeClaims np's limits.nodes allows, every
// NodeClaim counted (deleting and pending ones too, as the reference's
// ReserveNodeCount); MaxInt64 without the limit.
func (c StaticCounts) Room(np *v1.NodePool) int64 {
	limit, ok := np.Spec.Limits[provisioning.ResourceNodes]
	if !ok {
		return math.MaxInt64
	}
	return max(0, limit.Value()-int64(len(c.Active))-c.Deleting-c.Pending)
}

// ConsolidationAllowed reports whether disruption may consolidate np's
// nodes (Emptiness, consolidation, returns to preferred capacity): never
// a static NodePool's, which keeps its replicas, as the reference's
// emptiness.go and consolidation.go skip static candidates and its
// nodeclaim disruption controller never marks them Consolidatable
// (docs/static.md).
func ConsolidationAllowed(np *v1.NodePool) bool { return !np.Static() }

// staticReplacements is how many drifted nodes of each static NodePool
// may be replaced now: none while the NodePool is above its replicas
// (its scale-down comes first), else what limits.nodes leaves room for,
// as the reference's static drift (pkg/controllers/disruption/staticdrift.go).
func staticReplacements(in Input) map[string]int64 {
	nodes := make(map[string]*corev1.Node, len(in.Nodes))
	for _, n := range in.Nodes {
		nodes[n.Name] = n
	}
	out := map[string]int64{}
	for _, np := range in.NodePools {
		if !np.Static() {
			continue
		}
		c := CountStatic(np, in.NodeClaims, nodes)
		if int64(len(c.Active))+c.Pending > *np.Spec.Replicas {
			out[np.Name] = 0
			continue
		}
		out[np.Name] = c.Room(np)
	}
	return out
}
