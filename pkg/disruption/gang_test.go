package disruption

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/gang"
)

// inGang puts a pod in the gang key by Capstan's annotation.
func inGang(key string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Annotations = map[string]string{gang.AtomicGroupAnnotationKey: key} }
}

// A gang is moved only as a whole: a node running part of one is held,
// with a verdict saying why; a node running a whole gang moves like any.
func TestGangsMoveOnlyWhole(t *testing.T) {
	held := func(node, msg string) Verdict {
		v := driftBlocked(node, msg)
		v.Code = VerdictGang
		return v
	}
	runReplaceCases(t, Drift{}, []replaceCase{
		{"a node running part of a gang is held", func(c *cluster) {
			c.drift("a", t0)
			c.pod("w0", "a", inGang("ml/train"), requests("1"))
			c.pod("w1", "b", inGang("ml/train"), requests("1"))
		}, nil, [][]string{}, []Verdict{held("a", "pod default/w0 belongs to gang ml/train, which runs on 2 nodes; a gang is moved only as a whole")}, 1},
		{"a node running a whole gang is replaced", func(c *cluster) {
			c.drift("a", t0)
			c.pod("w0", "a", inGang("ml/train"), requests("1"))
			c.pod("w1", "a", inGang("ml/train"), requests("1"))
			c.pod("other", "b", inGang("ml/eval"), requests("1"))
		}, []string{"a"}, [][]string{}, nil, 1},
		{"finished members do not hold it", func(c *cluster) {
			c.drift("a", t0)
			c.pod("w0", "a", inGang("ml/train"), requests("1"))
			c.pod("w1", "b", inGang("ml/train"), requests("1"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
		}, []string{"a"}, [][]string{}, nil, 1},
	})
}

// Consolidation does not take a gang apart to save: the case
// "delete: its pods fit the others' free capacity" with its pods a gang
// across both nodes deletes neither; with the whole gang on b, a goes.
func TestConsolidationKeepsAGangWhole(t *testing.T) {
	od := v1.CapacityTypeOnDemand
	held := func(node, pod string) Verdict {
		return Verdict{NodeClaim: "nc-" + node, Node: node, Method: "SingleNodeConsolidation", Event: EventUnconsolidatable, Code: VerdictGang,
			Message: "pod default/" + pod + " belongs to gang ml/train, which runs on 2 nodes; a gang is moved only as a whole"}
	}
	for _, tc := range []consolidationCase{
		{name: "a gang across both nodes holds them", setup: func(c *cluster) {
			c.launched("a", m5n(4), od, "")
			c.launched("b", m5n(4), od, "")
			c.pod("web-a", "a", requests("1"), inGang("ml/train"))
			c.pod("web-b1", "b", requests("1"), inGang("ml/train"))
			c.pod("web-b2", "b", requests("1"))
		}, verdicts: []Verdict{held("a", "web-a"), held("b", "web-b1")}, eligible: 2},
		{name: "a whole gang on one node does not", setup: func(c *cluster) {
			c.launched("a", m5n(4), od, "")
			c.launched("b", m5n(4), od, "")
			c.pod("web-a", "a", requests("1"))
			c.pod("web-b1", "b", requests("1"), inGang("ml/train"))
			c.pod("web-b2", "b", requests("1"), inGang("ml/train"))
		}, want: []string{"a"}, eligible: 2},
	} {
		t.Run(tc.name, func(t *testing.T) { runConsolidation(t, SingleNodeConsolidation{}, tc) })
	}
}
