package provisioning

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/gang"
)

// atomicGroup is one atomic group among the pods to place.
type atomicGroup struct {
	// min is how many members must be placed (or already be) together.
	min int
	// bound counts members already bound or nominated to a node.
	bound int
	// excluded says why the group is left out; "" while it is not.
	excluded string
}

// atomicGroups are the groups the pods to place belong to, by key; nil
// when none is in one. Only then are the nodes' pods read, to count the
// members already bound.
func atomicGroups(in Input) map[string]*atomicGroup {
	var groups map[string]*atomicGroup
	pending := map[string]int{}
	for _, p := range slices.Concat(in.Holding, in.Pods, in.Yielding) {
		if key := gang.KeyOf(p); gang.IsGang(key, in.AtomicGroups) {
			if groups == nil {
				groups = map[string]*atomicGroup{}
			}
			groups[key] = &atomicGroup{}
			pending[key]++
		}
	}
	if groups == nil {
		return nil
	}
	for _, n := range in.Nodes {
		for _, p := range n.Pods {
			if g, ok := groups[gang.KeyOf(p)]; ok {
				g.bound++
			}
		}
	}
	for key, g := range groups {
		g.min = gang.MinCount(key, in.AtomicGroups, g.bound+pending[key])
	}
	return groups
}

// solveAtomic places the pods so that every atomic group gets at least
// its min count placed, or none. A group short of it is left out and the
// rest solved again without it, so none of the capacity planned for it is
// kept from other pods; leaving a group out only frees capacity, and each
// round leaves at least one out, so the rounds end.
func solveAtomic(in Input, groups map[string]*atomicGroup) Result {
	for {
		sub := in
		sub.Holding, sub.Pods, sub.Yielding = included(in.Holding, groups), included(in.Pods, groups), included(in.Yielding, groups)
		r := solve(sub)
		if !excludeShort(r, groups) {
			for _, p := range slices.Concat(in.Holding, in.Pods, in.Yielding) {
				if g := groups[gang.KeyOf(p)]; g != nil && g.excluded != "" {
					r.Unplaced = append(r.Unplaced, Unplaced{Pod: p, Reason: ReasonIncompleteGang, Message: g.excluded})
				}
			}
			return r
		}
	}
}

// included are the pods not in a group left out. Virtual pods (a
// ProvisioningRequest's, Holding) form groups as real pods do.
func included(pods []*corev1.Pod, groups map[string]*atomicGroup) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if g := groups[gang.KeyOf(p)]; g == nil || g.excluded == "" {
			out = append(out, p)
		}
	}
	return out
}

// excludeShort leaves out every group the result places fewer than its
// min count of, and reports whether it left any out.
func excludeShort(r Result, groups map[string]*atomicGroup) bool {
	placed := map[string]int{}
	for _, n := range r.Nominations {
		placed[gang.KeyOf(n.Pod)]++
	}
	for _, c := range r.NewNodeClaims {
		for _, p := range c.Pods {
			placed[gang.KeyOf(p)]++
		}
	}
	// The first member left unplaced says why the group falls short.
	cause := map[string]Unplaced{}
	for _, u := range r.Unplaced {
		if key := gang.KeyOf(u.Pod); key != "" {
			if _, ok := cause[key]; !ok {
				cause[key] = u
			}
		}
	}
	left := false
	for key, g := range groups {
		if g.excluded != "" || g.bound+placed[key] >= g.min {
			continue
		}
		msg := fmt.Sprintf("gang %s needs %d pods placed together, only %d can be", key, g.min, g.bound+placed[key])
		if u, ok := cause[key]; ok {
			msg += fmt.Sprintf(" (%s: %s)", u.Reason, u.Message)
		}
		g.excluded = msg
		left = true
	}
	return left
}
