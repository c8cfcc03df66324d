package provisioning

import (
	"reflect"
	"slices"
)

// nodeCursor is where placeOnNode's first fit resumes for pods alike
// (see alike): the first node, per variant, that may still take one.
// A node only gets fuller within a solve and its labels, taints and
// deletion never change, so a node that refused such a pod refuses
// every later one; without the cursor each of 100,000 replicas read
// every node before the first with room.
type nodeCursor struct {
	pod  *podData
	from []int
}

// cursor is p's node cursor, nil when p's topology can change a node's
// verdict as pods are placed (a spread's minimum moves). Pods are kept
// by shape, one kind per shape: another kind of the same shape starts
// its own cursor over.
func (s *solver) cursor(p *podData) *nodeCursor {
	if !uniform(p) {
		return nil
	}
	for len(s.cursors) <= int(p.shape) {
		s.cursors = append(s.cursors, nodeCursor{})
	}
	c := &s.cursors[p.shape]
	if c.pod == nil || !alike(c.pod, p) {
		c.pod, c.from = p, make([]int, len(p.variants))
	}
	return c
}

// uniform: no variant of p has a topology constraint and no other pod's
// anti-affinity selects it, so what decides whether a node takes it is
// the node's room, labels, taints and host ports alone.
func uniform(p *podData) bool {
	if len(p.inverse) > 0 {
		return false
	}
	for i := range p.variants {
		if len(p.variants[i].constraints) > 0 {
			return false
		}
	}
	return true
}

// alike reports whether a node takes a and b alike: the same host
// ports, atomic group, tolerations, and variants' requirements and
// requests (shape).
// A pod's own shape is not compared: once placed, it is its placing
// variant's.
func alike(a, b *podData) bool {
	if a.group != b.group || !slices.Equal(a.hostPorts, b.hostPorts) || len(a.variants) != len(b.variants) ||
		!reflect.DeepEqual(a.pod.Spec.Tolerations, b.pod.Spec.Tolerations) {
		return false
	}
	for i := range a.variants {
		if a.variants[i].shape != b.variants[i].shape || !reflect.DeepEqual(a.variants[i].reqs, b.variants[i].reqs) {
			return false
		}
	}
	return true
}
