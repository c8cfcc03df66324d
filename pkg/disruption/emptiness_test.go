package disruption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestEmptiness(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*cluster)
		now   time.Time
		want  []string
	}{
		{"empty nodes go, busy ones stay", func(c *cluster) { c.pod("web", "b") }, t0, []string{"a", "c"}},
		{"daemonset pods don't make a node busy", func(c *cluster) { c.pod("logs", "a", daemon) }, t0, []string{"a", "b", "c"}},
		{"consolidateAfter counts from the last pod event", func(c *cluster) {
			c.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("10m")
			c.claim("a").Status.LastPodEventTime = metav1.NewTime(t0.Add(5 * time.Minute))
		}, t0.Add(12 * time.Minute), []string{"b", "c"}},
		// The reference counts from the Initialized condition without a pod
		// event (pkg/utils/disruption/disruption.go): created at t0,
		// initialized at t0+5m, consolidateAfter 10m.
		{"without a pod event consolidateAfter counts from initialization", func(c *cluster) {
			c.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("10m")
			c.claim("a").Status.Conditions[0].LastTransitionTime = metav1.NewTime(t0.Add(5 * time.Minute))
		}, t0.Add(12 * time.Minute), []string{"b", "c"}},
		{"consolidateAfter: Never disables it", func(c *cluster) {
			c.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never)
		}, t0.Add(time.Hour), nil},
		{"WhenEmpty consolidates empty nodes too", func(c *cluster) {
			c.pool().Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmpty
		}, t0, []string{"a", "b", "c"}},
		{"as many as the Empty budget allows", func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "2"}}
		}, t0, []string{"a", "b"}},
		{"a NotReady node uses up the budget", func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1"}}
			c.nodeNamed("c").Status.Conditions = nil
		}, t0, nil},
		{"a budget of 0 keeps them", func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}}
		}, t0, nil},
		{"blocked nodes are left alone", func(c *cluster) { c.pod("keep", "a", daemon, doNotDisrupt) }, t0, []string{"b", "c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a", "b", "c")
			tc.setup(c)
			d := Plan(c.in, Methods(Gates{Drift: true}), tc.now)
			cmd, ok := d.Command, d.Found
			if ok != (len(tc.want) > 0) {
				t.Fatalf("command %v (%+v), want one for %v", ok, cmd, tc.want)
			}
			if !ok {
				return
			}
			if cmd.Method != "Emptiness" || cmd.Reason != v1.DisruptionReasonEmpty {
				t.Errorf("method %s reason %s", cmd.Method, cmd.Reason)
			}
			if diff := cmp.Diff(tc.want, names(cmd.Candidates)); diff != "" {
				t.Errorf("disrupted (-want +got):\n%s", diff)
			}
		})
	}
}
