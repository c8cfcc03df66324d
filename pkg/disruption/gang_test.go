package disruption

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

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

// Consolidation does not take a gang apart to save either.
func TestConsolidationKeepsAGangWhole(t *testing.T) {
	c := newCluster("a", "b")
	c.capacity("a", "4")
	c.capacity("b", "4")
	c.pod("w0", "a", inGang("ml/train"), requests("1"))
	c.pod("w1", "b", inGang("ml/train"), requests("1"))
	c.snapshot(m5...)
	d := Plan(c.in, []Method{SingleNodeConsolidation{}, MultiNodeConsolidation{}}, t0.Add(time.Hour))
	if d.Found {
		t.Fatalf("consolidation disrupts %v, part of a gang", names(d.Command.Candidates))
	}
}
