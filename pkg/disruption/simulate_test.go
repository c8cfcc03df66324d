package disruption

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The instance types NodePool "default" offers in these tests: m5.1 to
// m5.8, 1 to 8 cores (a little less allocatable).
var m5 = test.InstanceTypeSeries("m5", 8)

// replacementPods are each replacement's pods, by namespaced name.
func replacementPods(s Simulation) [][]string {
	out := [][]string{}
	for _, r := range s.Replacements {
		got := podNames(r.Pods)
		slices.Sort(got)
		out = append(out, got)
	}
	return out
}

func TestSimulate(t *testing.T) {
	cases := []struct {
		name string
		// Nodes a, b and c, 4 cores each, NodePool "default" with m5.
		setup      func(*cluster)
		candidates []string
		// replacements are the pods of each replacement NodeClaim.
		replacements [][]string
		unplaced     []string
	}{
		{"no pods: nothing to place", func(*cluster) {}, []string{"a"}, [][]string{}, []string{}},
		{"daemonset pods stay behind", func(c *cluster) {
			c.pod("logs", "a", daemon, requests("3"))
			c.pod("fill-b", "b", requests("4"))
			c.pod("fill-c", "c", requests("4"))
		}, []string{"a"}, [][]string{}, []string{}},
		{"onto another node's free capacity: no replacement", func(c *cluster) {
			c.pod("web", "a", requests("2"))
			c.pod("fill-b", "b", requests("4"))
		}, []string{"a"}, [][]string{}, []string{}},
		{"spread over the free capacity of several nodes", func(c *cluster) {
			c.pod("web-1", "a", requests("1.5"))
			c.pod("web-2", "a", requests("1.5"))
			c.pod("fill-b", "b", requests("2.5"))
			c.pod("fill-c", "c", requests("2.5"))
		}, []string{"a"}, [][]string{}, []string{}},
		{"the others are full: a replacement", func(c *cluster) {
			c.pod("web", "a", requests("2"))
			c.pod("fill-b", "b", requests("3"))
			c.pod("fill-c", "c", requests("3"))
		}, []string{"a"}, [][]string{{"default/web"}}, []string{}},
		{"what fits goes to free capacity, the rest to a replacement", func(c *cluster) {
			c.pod("small", "a", requests("0.5"))
			c.pod("large", "a", requests("2"))
			c.pod("fill-b", "b", requests("3"))
			c.pod("fill-c", "c", requests("3"))
		}, []string{"a"}, [][]string{{"default/large"}}, []string{}},
		{"a candidate's own free capacity is never used", func(c *cluster) {
			c.capacity("a", "8")
			c.pod("web", "a", requests("1"))
			c.pod("fill-b", "b", requests("4"))
			c.pod("fill-c", "c", requests("4"))
		}, []string{"a"}, [][]string{{"default/web"}}, []string{}},
		{"nor another candidate's", func(c *cluster) {
			c.pod("web-a", "a", requests("1"))
			c.pod("web-b", "b", requests("1"))
			c.pod("fill-c", "c", requests("4"))
		}, []string{"a", "b"}, [][]string{{"default/web-a", "default/web-b"}}, []string{}},
		{"a tainted node takes nothing", func(c *cluster) {
			c.pod("web", "a", requests("1"))
			c.nodeNamed("b").Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
			c.pod("fill-c", "c", requests("4"))
		}, []string{"a"}, [][]string{{"default/web"}}, []string{}},
		{"a deleting node takes nothing", func(c *cluster) {
			c.pod("web", "a", requests("1"))
			c.claim("b").DeletionTimestamp = &metav1.Time{Time: t0}
			c.pod("fill-c", "c", requests("4"))
		}, []string{"a"}, [][]string{{"default/web"}}, []string{}},
		{"too large for any node or instance type: unplaced", func(c *cluster) {
			c.pod("huge", "a", requests("32"))
		}, []string{"a"}, [][]string{}, []string{"default/huge"}},
		{"pending pods are the provisioner's, not counted", func(c *cluster) {
			c.pod("web", "a", requests("1"))
			c.pendingPod("waiting", requests("4"))
			c.pod("fill-c", "c", requests("4"))
		}, []string{"a"}, [][]string{}, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a", "b", "c")
			for _, n := range []string{"a", "b", "c"} {
				c.capacity(n, "4")
			}
			tc.setup(c)
			c.snapshot(m5...)
			var cs []Candidate
			for _, cand := range Candidates(c.in, t0) {
				if slices.Contains(tc.candidates, cand.Node.Name) {
					cs = append(cs, cand)
				}
			}
			before := len(c.in.Snapshot.Input.Nodes)
			sim := Simulate(c.in.Snapshot, cs)
			if diff := cmp.Diff(tc.replacements, replacementPods(sim)); diff != "" {
				t.Errorf("replacements' pods (-want +got):\n%s", diff)
			}
			unplaced := []string{}
			for _, u := range sim.Unplaced {
				unplaced = append(unplaced, u.Pod.Namespace+"/"+u.Pod.Name)
				if u.Message == "" {
					t.Errorf("pod %s unplaced without a message", u.Pod.Name)
				}
			}
			if diff := cmp.Diff(tc.unplaced, unplaced); diff != "" {
				t.Errorf("unplaced (-want +got):\n%s", diff)
			}
			for _, r := range sim.Replacements {
				if r.NodePool != "default" {
					t.Errorf("replacement from nodepool %q, want default", r.NodePool)
				}
			}
			// The snapshot and the candidates' pods are left as they were.
			if len(c.in.Snapshot.Input.Nodes) != before {
				t.Errorf("the snapshot lost nodes: %d, had %d", len(c.in.Snapshot.Input.Nodes), before)
			}
			for _, cand := range cs {
				for _, p := range cand.Pods {
					if p.Spec.NodeName != cand.Node.Name {
						t.Errorf("pod %s moved off %s in the input", p.Name, cand.Node.Name)
					}
				}
			}
		})
	}
}

// A pending pod that fits an existing node is headed there: the node is
// nominated. One no node can take needs a new NodeClaim instead.
func TestNominatedNodes(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*cluster)
		want  map[string]bool
	}{
		{"no pending pods", func(*cluster) {}, nil},
		{"a pending pod that fits a", func(c *cluster) {
			c.pod("fill-b", "b", requests("4"))
			c.pendingPod("waiting", requests("1"))
		}, map[string]bool{"a": true}},
		{"one that fits no node", func(c *cluster) {
			c.pendingPod("waiting", requests("6"))
		}, map[string]bool{}},
		{"the pods of a deleting node wait for capacity too", func(c *cluster) {
			c.pod("evicted", "b", requests("1"))
			c.claim("b").DeletionTimestamp = &metav1.Time{Time: t0}
		}, map[string]bool{"a": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a", "b")
			c.capacity("a", "4")
			c.capacity("b", "4")
			tc.setup(c)
			c.snapshot(m5...)
			if diff := cmp.Diff(tc.want, nominatedNodes(c.in.Snapshot)); diff != "" {
				t.Errorf("nominated (-want +got):\n%s", diff)
			}
		})
	}
}

// A pod sized by term (an llmaz flavor's resources, scaleup.PinFlavors)
// is placed with those requests: its replacement fits them, not the pod's
// own.
func TestSimulateSizesByTerm(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sized bool
		want  string
	}{
		{"the pod's own requests", false, "m5.2"},
		{"its term's", true, "m5.4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a", "b")
			c.capacity("a", "4")
			c.capacity("b", "4")
			c.pod("web", "a", requests("1"))
			c.pod("fill-b", "b", requests("4"))
			c.snapshot(m5...)
			cs := Candidates(c.in, t0)
			cs = slices.DeleteFunc(cs, func(cand Candidate) bool { return cand.Node.Name != "a" })
			if tc.sized {
				c.in.Snapshot.Input.TermRequests = map[*corev1.Pod][]scheduling.Resources{cs[0].Pods[0]: {{CPU: 3000, Memory: 64 << 20, Pods: 1}}}
			}
			sim := Simulate(c.in.Snapshot, cs)
			if len(sim.Replacements) != 1 || sim.Replacements[0].InstanceTypes[0].Name != tc.want {
				t.Fatalf("replacements %+v, want one whose cheapest type is %s", sim.Replacements, tc.want)
			}
		})
	}
}
