package provisioning

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pods topology counting cannot tell apart share a shape, across nodes;
// a different namespace, label or anti-affinity term is another shape.
func TestPodShapes(t *testing.T) {
	pod := func(name, ns string, labels map[string]string, antiAffinityKey string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}}
		if antiAffinityKey != "" {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: antiAffinityKey}}}}
		}
		return p
	}
	web := map[string]string{"app": "web", "tier": "front"}
	webReordered := map[string]string{"tier": "front", "app": "web"}
	s := NewPodShapes()
	first := s.Group([]*corev1.Pod{
		pod("a", "default", web, ""), pod("b", "default", webReordered, ""), pod("c", "other", web, ""),
		pod("d", "default", map[string]string{"app": "db"}, ""), pod("e", "default", web, corev1.LabelHostname),
	})
	second := s.Group([]*corev1.Pod{pod("f", "default", web, corev1.LabelHostname), pod("g", "default", web, corev1.LabelTopologyZone), pod("h", "default", web, "")})
	type group struct {
		Pod   string
		Count int32
		Shape int
	}
	view := func(gs []PodGroup) []group {
		var out []group
		for _, g := range gs {
			out = append(out, group{g.Pod.Name, g.Count, g.Shape})
		}
		return out
	}
	if diff := cmp.Diff([]group{{"a", 2, 0}, {"c", 1, 1}, {"d", 1, 2}, {"e", 1, 3}}, view(first)); diff != "" {
		t.Errorf("first node (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]group{{"f", 1, 3}, {"g", 1, 4}, {"h", 1, 0}}, view(second)); diff != "" {
		t.Errorf("second node, numbered on (-want +got):\n%s", diff)
	}
}
