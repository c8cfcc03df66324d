package disruption

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestCandidates(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(*cluster)
		blocked string
		pods    int
	}{
		{"a plain node", func(*cluster) {}, "", 0},
		{"its pods, not its daemonsets or finished pods", func(c *cluster) {
			c.pod("web", "a")
			c.pod("logs", "a", daemon)
			c.pod("job", "a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
		}, "", 1},
		{"being deleted", func(c *cluster) { c.claim("a").DeletionTimestamp = &metav1.Time{Time: t0} }, "node is being deleted", 0},
		{"its Node being deleted", func(c *cluster) { c.nodeNamed("a").DeletionTimestamp = &metav1.Time{Time: t0} }, "node is being deleted", 0},
		{"not initialized", func(c *cluster) { c.claim("a").Status.Conditions = nil }, "node is not initialized", 0},
		{"do-not-disrupt on the node", func(c *cluster) {
			c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}, "node a has do-not-disrupt", 0},
		{"do-not-disrupt on a pod", func(c *cluster) { c.pod("web", "a", doNotDisrupt) }, "pod default/web has do-not-disrupt", 1},
		{"do-not-disrupt on a daemonset pod counts too", func(c *cluster) {
			c.pod("logs", "a", daemon, doNotDisrupt)
		}, "pod default/logs has do-not-disrupt", 0},
		{"a PDB that allows no disruption", func(c *cluster) {
			c.pod("web", "a")
			c.pdb("web-pdb", 0)
		}, "pdb default/web-pdb prevents pod evictions", 1},
		{"a PDB that still allows one", func(c *cluster) {
			c.pod("web", "a")
			c.pdb("web-pdb", 1)
		}, "", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a")
			tc.setup(c)
			got := Candidates(c.in)
			if len(got) != 1 {
				t.Fatalf("%d candidates, want 1", len(got))
			}
			if got[0].Blocked != tc.blocked || len(got[0].Pods) != tc.pods {
				t.Errorf("blocked %q with %d pods, want %q with %d", got[0].Blocked, len(got[0].Pods), tc.blocked, tc.pods)
			}
		})
	}
}

// Only NodeClaims a known NodePool owns, with a registered Node, are
// candidates, in name order.
func TestCandidatesNeedANodePoolAndANode(t *testing.T) {
	c := newCluster("b", "a", "orphan", "unregistered")
	c.claim("orphan").Labels[v1.NodePoolLabelKey] = "gone"
	c.claim("unregistered").Status.NodeName = "never-joined"
	if diff := cmp.Diff([]string{"a", "b"}, names(Candidates(c.in))); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
}
