package disruption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// Disruption's simulations solve with the controller's relaxation
// policies, as scale-up does (docs/controller.md): a drifted node whose
// pod needs more instance types than the NodePool offers is replaced
// under BestEffort, kept under Strict.
func TestNewInputSolvesWithThePolicies(t *testing.T) {
	cases := []struct {
		name     string
		policies Policies
		want     []string
		// replacements are the pods of each replacement NodeClaim.
		replacements [][]string
	}{
		{"Strict keeps it", Policies{MinValues: provisioning.MinValuesPolicyStrict}, []string{}, [][]string{}},
		{"the zero value is Strict", Policies{}, []string{}, [][]string{}},
		{"BestEffort replaces it", Policies{MinValues: provisioning.MinValuesPolicyBestEffort}, []string{"a"}, [][]string{{"default/web"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a", "b")
			c.capacity("a", "4")
			c.capacity("b", "4")
			// Eight m5 types offered, ten asked for.
			c.pool().Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{
				Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpExists, MinValues: ptr.To(10),
			}}
			c.drift("a", t0)
			c.pod("web", "a", requests("3"))
			c.pod("fill", "b", requests("3"))
			c.snapshot(m5...)
			d := Plan(NewInput(c.objs, c.in.Snapshot, tc.policies), []Method{Drift{}}, t0.Add(time.Hour))
			if diff := cmp.Diff(tc.want, names(d.Command.Candidates)); diff != "" {
				t.Errorf("disrupted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.replacements, replacementPods(Simulation{Replacements: d.Command.Replacements})); diff != "" {
				t.Errorf("replacements' pods (-want +got):\n%s", diff)
			}
		})
	}
}
