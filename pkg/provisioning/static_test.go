package provisioning_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// A static NodePool's replica is its template only: requirements, labels
// and taints, pinned to the NodePool, with no pods (docs/static.md).
func TestStaticNodeClaim(t *testing.T) {
	taint := corev1.Taint{Key: "dedicated", Value: "base", Effect: corev1.TaintEffectNoSchedule}
	np := nodePool("base", func(np *v1.NodePool) {
		np.Spec.Replicas = ptr.To[int64](2)
		np.Spec.Template.ObjectMeta.Labels = map[string]string{"team": "a"}
		np.Spec.Template.Spec.Taints = []corev1.Taint{taint}
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}}}
	})
	c := provisioning.StaticNodeClaim(np)
	got := struct {
		NodePool, Team, CapacityType string
		Pods                         int
		Taints                       []corev1.Taint
	}{c.NodePool, c.Labels["team"], c.Requirements.Get(v1.CapacityTypeLabelKey).Values()[0], len(c.Pods), c.Taints}
	want := got
	want.NodePool, want.Team, want.CapacityType, want.Pods, want.Taints = "base", "a", v1.CapacityTypeOnDemand, 0, []corev1.Taint{taint}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("static claim (-want +got):\n%s", diff)
	}
	if !c.Requirements.Get(v1.NodePoolLabelKey).Has("base") || c.Labels[v1.NodePoolLabelKey] != "base" {
		t.Errorf("requirements %v, labels %v: want the NodePool pinned", c.Requirements, c.Labels)
	}
}

// A prepared solve, as disruption's, plans no claim from a static
// NodePool either.
func TestPreparedSolveSkipsStaticNodePools(t *testing.T) {
	in := provisioning.Input{
		Pods:          pods(1, "3", "1Gi"),
		NodePools:     []*v1.NodePool{nodePool("static", func(np *v1.NodePool) { np.Spec.Replicas = ptr.To[int64](2) })},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"static": small()},
	}
	in.Prepared = provisioning.Prepare(in)
	r := provisioning.Solve(in)
	if len(r.NewNodeClaims) != 0 || len(r.Unplaced) != 1 {
		t.Errorf("%d claims, %d unplaced; want none planned, the pod unplaced", len(r.NewNodeClaims), len(r.Unplaced))
	}
}
