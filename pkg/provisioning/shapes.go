package provisioning

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// PodGroup is Count pods of one shape bound to a node, Pod one of them.
type PodGroup struct {
	Pod   *corev1.Pod
	Count int32
	// Shape is the same for pods topology counting cannot tell apart:
	// the same namespace, labels and pod anti-affinity.
	Shape int
}

// PodShapes numbers pod shapes across a snapshot, so that the solver
// works out what a shape counts in once, not once per pod.
type PodShapes struct {
	ids map[string]int
	key strings.Builder
}

// NewPodShapes starts a snapshot's numbering.
func NewPodShapes() *PodShapes { return &PodShapes{ids: map[string]int{}} }

// Group is pods grouped by shape, in the order each shape first appears.
func (s *PodShapes) Group(pods []*corev1.Pod) []PodGroup {
	out := []PodGroup{}
	at := map[int]int{}
	for _, p := range pods {
		id := s.id(p)
		if i, ok := at[id]; ok {
			out[i].Count++
			continue
		}
		at[id] = len(out)
		out = append(out, PodGroup{Pod: p, Count: 1, Shape: id})
	}
	return out
}

// id is p's shape: what counter matching (namespace, labels) and inverse
// anti-affinity (its required terms, which read its labels and
// namespace) read of it.
func (s *PodShapes) id(p *corev1.Pod) int {
	s.key.Reset()
	s.key.WriteString(p.Namespace)
	s.key.WriteByte(0)
	for _, k := range slices.Sorted(maps.Keys(p.Labels)) {
		s.key.WriteString(k)
		s.key.WriteByte('=')
		s.key.WriteString(p.Labels[k])
		s.key.WriteByte(0)
	}
	if aff := p.Spec.Affinity; aff != nil && aff.PodAntiAffinity != nil {
		s.key.WriteString(aff.PodAntiAffinity.String())
	}
	key := s.key.String()
	id, ok := s.ids[key]
	if !ok {
		id = len(s.ids)
		s.ids[key] = id
	}
	return id
}
