package disruption

import (
	"testing"
	"time"

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
		// The NodePool template's annotations reach the NodeClaim only.
		{"do-not-disrupt on the NodeClaim", func(c *cluster) {
			c.claim("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}, "nodeclaim nc-a has do-not-disrupt", 0},
		{"an invalid do-not-disrupt on the node holds as true", func(c *cluster) {
			c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "yes"}
		}, `node a has do-not-disrupt with an invalid value ("yes" is neither "true" nor a duration), held as "true"`, 0},
		{"a duration on the NodeClaim holds as true", func(c *cluster) {
			c.claim("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "30m"}
		}, `nodeclaim nc-a has do-not-disrupt with an invalid value (duration "30m" applies to pods only), held as "true"`, 0},
		{"false on the node asks for nothing", func(c *cluster) {
			c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "false"}
		}, "", 0},
		{"do-not-disrupt in the NodePool's template", func(c *cluster) {
			c.in.NodePools[0].Spec.Template.ObjectMeta.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}, "nodepool template of default has do-not-disrupt", 0},
		{"do-not-disrupt for a duration not yet elapsed", func(c *cluster) {
			c.pod("web", "a", doNotDisruptFor("30m", t0.Add(-10*time.Minute)))
		}, "pod default/web has do-not-disrupt until 2026-03-10T12:20:00Z", 1},
		{"do-not-disrupt for a duration elapsed", func(c *cluster) {
			c.pod("web", "a", doNotDisruptFor("30m", t0.Add(-30*time.Minute)))
		}, "", 1},
		{"the longest of two durations names the hold", func(c *cluster) {
			c.pod("web", "a", doNotDisruptFor("30m", t0.Add(-10*time.Minute)))
			c.pod("batch", "a", doNotDisruptFor("1h", t0.Add(-10*time.Minute)))
		}, "pod default/batch has do-not-disrupt until 2026-03-10T12:50:00Z", 2},
		{"true outlasts any duration", func(c *cluster) {
			c.pod("web", "a", doNotDisruptFor("30m", t0.Add(-10*time.Minute)))
			c.pod("batch", "a", doNotDisrupt)
		}, "pod default/batch has do-not-disrupt", 2},
		{"an invalid value holds as true", func(c *cluster) {
			c.pod("web", "a", doNotDisruptFor("forever", t0))
		}, `pod default/web has do-not-disrupt with an invalid value ("forever" is neither "true" nor a duration), held as "true"`, 1},
		{"false asks for nothing", func(c *cluster) { c.pod("web", "a", doNotDisruptFor("false", t0)) }, "", 1},
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
			got := Candidates(c.in, t0)
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
	if diff := cmp.Diff([]string{"a", "b"}, names(Candidates(c.in, t0))); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
}
