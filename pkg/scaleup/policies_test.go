package scaleup

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

// Decide solves with the policies it is given (the controller's and
// simulate's --min-values-policy and --preference-policy): a NodePool
// asking for two instance families where one exists launches only under
// BestEffort, annotated relaxed.
func TestDecidePassesThePolicies(t *testing.T) {
	two := 2
	np := test.NodePool(func(np *v1.NodePool) {
		np.Name = "default"
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"m", "c"}, MinValues: &two}}
	})
	its := []*cloudprovider.InstanceType{test.InstanceType(test.InstanceTypeOptions{Name: "m.xlarge", CPU: 4, Memory: 16, Family: "m"})}
	for _, tc := range []struct {
		policy provisioning.MinValuesPolicy
		want   []string // the relaxed annotation of each NodeClaim
	}{
		{provisioning.MinValuesPolicyStrict, nil},
		{provisioning.MinValuesPolicyBestEffort, []string{"true"}},
	} {
		snapshot := state.Snapshot{NodePools: map[string]*v1.NodePool{"default": np}, Input: provisioning.Input{
			Pods: []*corev1.Pod{test.Pod("default")}, NodePools: []*v1.NodePool{np},
			InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": its},
		}}
		d := Decide(snapshot, Options{MaxInstanceTypes: provisioning.DefaultMaxInstanceTypes, MinValuesPolicy: tc.policy}, func(string) string { return "nc" })
		var got []string
		for _, nc := range d.NodeClaims {
			got = append(got, nc.Annotations[v1.NodeClaimMinValuesRelaxedAnnotationKey])
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: relaxed annotations (-want +got):\n%s", tc.policy, diff)
		}
	}
}
