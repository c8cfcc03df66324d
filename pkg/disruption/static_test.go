package disruption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Static NodePools in disruption, as the reference's
// (pkg/controllers/disruption: emptiness.go and consolidation.go skip
// static candidates; staticdrift.go replaces drifted ones one for one
// from the template, within the budget and limits.nodes, and not while
// the NodePool is above its replicas).
func TestStaticNodePoolDisruption(t *testing.T) {
	static := func(replicas int64) func(*cluster) {
		return func(c *cluster) { c.pool().Spec.Replicas = ptr.To(replicas) }
	}
	nodesLimit := func(n string) func(*cluster) {
		return func(c *cluster) { c.pool().Spec.Limits = v1.Limits{"nodes": resource.MustParse(n)} }
	}
	type want struct {
		Method       string
		Candidates   []string
		Replacements []string // each replacement's NodePool
	}
	for _, tc := range []struct {
		name  string
		setup []func(*cluster)
		want  want
	}{
		{"a dynamic NodePool's empty nodes are consolidated", []func(*cluster){func(c *cluster) { c.pod("web", "b") }},
			want{Method: "Emptiness", Candidates: []string{"a", "c"}}},
		{"a static NodePool's empty nodes are never consolidated", []func(*cluster){static(3), func(c *cluster) { c.pod("web", "b") }},
			want{}},
		{"a drifted busy static node is replaced from the template", []func(*cluster){static(3), func(c *cluster) {
			c.pod("web", "b")
			c.drift("b", t0)
		}}, want{Method: "Drift", Candidates: []string{"b"}, Replacements: []string{"default"}}},
		{"drifted empty static nodes are replaced one at a time, the longest drifted first", []func(*cluster){static(3), func(c *cluster) {
			c.drift("a", t0.Add(time.Minute))
			c.drift("c", t0)
		}}, want{Method: "Drift", Candidates: []string{"c"}, Replacements: []string{"default"}}},
		{"limits.nodes leaves no room for a replacement", []func(*cluster){static(3), nodesLimit("3"), func(c *cluster) { c.drift("a", t0) }},
			want{}},
		{"limits.nodes leaves room for one", []func(*cluster){static(3), nodesLimit("4"), func(c *cluster) { c.drift("a", t0) }},
			want{Method: "Drift", Candidates: []string{"a"}, Replacements: []string{"default"}}},
		{"above its replicas, scale-down comes before drift", []func(*cluster){static(2), func(c *cluster) { c.drift("a", t0) }},
			want{}},
		{"the Drifted budget holds static drift", []func(*cluster){static(3), func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}}
			c.drift("a", t0)
		}}, want{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a", "b", "c")
			for _, n := range []string{"a", "b", "c"} {
				c.capacity(n, "4")
			}
			for _, s := range tc.setup {
				s(c)
			}
			c.snapshot(m5...)
			d := Plan(c.in, Methods(DefaultGates()), t0.Add(time.Hour))
			var got want
			if d.Found {
				got.Method, got.Candidates = d.Command.Method, names(d.Command.Candidates)
				for _, r := range d.Command.Replacements {
					got.Replacements = append(got.Replacements, r.NodePool)
					if len(r.Pods) > 0 || !r.Requirements.Get(v1.NodePoolLabelKey).Has("default") {
						t.Errorf("replacement %+v: want the template's claim, no pods", r)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
		})
	}
}

// CountStatic counts as the reference's NodePool state: deleting, pending
// (taken by a command: the disrupted taint), and active.
func TestCountStatic(t *testing.T) {
	c := newCluster("a", "b", "c", "d")
	c.pool().Spec.Replicas = ptr.To[int64](3)
	c.pool().Spec.Limits = v1.Limits{"nodes": resource.MustParse("6")}
	c.claim("b").DeletionTimestamp = ptr.To(c.claim("b").CreationTimestamp)
	c.nodeNamed("c").Spec.Taints = []corev1.Taint{v1.DisruptedNoScheduleTaint()}
	nodes := map[string]*corev1.Node{}
	for _, n := range c.in.Nodes {
		nodes[n.Name] = n
	}
	got := CountStatic(c.pool(), c.in.NodeClaims, nodes)
	if len(got.Active) != 2 || got.Deleting != 1 || got.Pending != 1 || got.Room(c.pool()) != 2 {
		t.Errorf("active %d deleting %d pending %d room %d; want 2, 1, 1, 2", len(got.Active), got.Deleting, got.Pending, got.Room(c.pool()))
	}
}

// A static NodePool's NodeClaims never get Consolidatable.
func TestStaticNodeClaimsAreNeverConsolidatable(t *testing.T) {
	c := newCluster("a")
	c.pool().Spec.Replicas = ptr.To[int64](1)
	nc := c.claim("a")
	nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue})
	if effs, at := Conditions(nc, c.pool(), "", false, t0.Add(time.Hour)); effs != nil || !at.IsZero() {
		t.Errorf("effects %v, wake %s; want none", effs, at)
	}
}
