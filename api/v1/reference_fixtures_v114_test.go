package v1_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-dev/capstan/pkg/test"
)

// The reference's examples for fields Capstan gains with static NodePools
// (spec.replicas, v1.8) and Balanced consolidation (v1.14); they pass once
// those fields are served.
const (
	msgStaticTransition = "Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes"
	msgStaticLimits     = "only 'limits.nodes' is supported on static NodePools"
	msgStaticWeight     = "'weight' is not supported on static NodePools"
)

var nodePoolFixturesV114 = []fixture{
	{nodePoolCEL, "should succeed when setting consolidateAfter with consolidationPolicy=Balanced", "disruption: {consolidateAfter: 30s, consolidationPolicy: Balanced}", false, ""},
	{nodePoolCEL, "should succeed when replicas is set to a positive value", "replicas: 5", false, ""},
	{nodePoolCEL, "should succeed when replicas is set to zero", "replicas: 0", false, ""},
	{nodePoolCEL, "should succeed when replicas is set to a large value", "replicas: 1000", false, ""},
	{nodePoolCEL, "should fail when replicas is set to a negative value", "replicas: -100", true, ""},
	{nodePoolCEL, "should fail for incompatible fields (limits.cpu)", `{replicas: 10, limits: {cpu: "1000"}}`, true, msgStaticLimits},
	{nodePoolCEL, "should fail for incompatible fields (limits.memory)", `{replicas: 10, limits: {memory: 2000Gi}}`, true, msgStaticLimits},
	{nodePoolCEL, "should fail for incompatible fields (limits.pods)", `{replicas: 10, limits: {pods: "10"}}`, true, msgStaticLimits},
	{nodePoolCEL, "should fail for incompatible fields (limits.ephemeral-storage)", `{replicas: 10, limits: {ephemeral-storage: 10Gi}}`, true, msgStaticLimits},
	{nodePoolCEL, "should fail for incompatible fields (weight)", `{replicas: 10, weight: 25}`, true, msgStaticWeight},
	{nodePoolCEL, "should succeed for compatible fields (limits.nodes)", `{replicas: 10, limits: {nodes: "100"}}`, false, ""},
	{nodePoolCEL, "should succeed for compatible fields (disruption with multiple budgets)", `{replicas: 10, disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 5m,
		budgets: [{nodes: "20%", schedule: "0 9 * * mon-fri", duration: 8h, reasons: [Drifted, Empty]}, {nodes: "30%", schedule: "0 22 * * sat,sun", duration: 4h, reasons: [Underutilized]}, {nodes: "5"}]}}`, false, ""},
	{nodePoolCEL, "should succeed for compatible fields (requirements)", `{replicas: 10, template: {spec: {requirements: [
		{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge, m5.2xlarge, c5.large, c5.xlarge, r5.large, r5.xlarge], minValues: 3},
		{key: topology.kubernetes.io/zone, operator: In, values: [us-west-2a, us-west-2b, us-west-2c]}, {key: karpenter.sh/capacity-type, operator: In, values: [on-demand, spot]},
		{key: kubernetes.io/arch, operator: In, values: [amd64]}, {key: karpenter.k8s.aws/instance-memory, operator: Gt, values: ["8192"]}, {key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ["64"]}]}}}`, false, ""},
}

func TestReferenceNodePoolFixturesV114(t *testing.T) {
	runFixtures(t, referenceNodePool, nodePoolFixturesV114)
}

// The reference's update scenarios (nodepool_validation_cel_test.go,
// "Update Scenarios"): a NodePool cannot switch between static and
// dynamic; a static one may change its replicas and nodes limit.
func TestReferenceStaticNodePoolUpdates(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name           string
		create, update string
		reject         bool
	}{
		{"should succeed when increasing replicas in a NodePool", "replicas: 3", "replicas: 5", false},
		{"should fail when changing the NodePool from static to dynamic", "replicas: 3", "replicas: null", true},
		{"should fail when changing the NodePool from dynamic to static", "{}", "replicas: 3", true},
		{"should succeed when changing the static NodePool nodes limit", `{replicas: 3, limits: {nodes: "10"}}`, `limits: {nodes: "20"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(referenceNodePool), &obj.Object); err != nil {
				t.Fatal(err)
			}
			patch := func(p string) {
				var m map[string]any
				if err := yaml.Unmarshal([]byte(p), &m); err != nil {
					t.Fatal(err)
				}
				spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
				spec = merge(spec, m)
				for k, v := range m {
					if v == nil {
						delete(spec, k)
					}
				}
				obj.Object["spec"] = spec
			}
			patch(tc.create)
			obj.SetName(test.RandomName("fixture"))
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatalf("%s: create: %v", nodePoolCEL, err)
			}
			patch(tc.update)
			err := env.Client.Update(ctx, obj)
			switch {
			case tc.reject && err == nil:
				t.Errorf("%s: update accepted; the reference rejects it", nodePoolCEL)
			case !tc.reject && err != nil:
				t.Errorf("%s: update rejected: %v", nodePoolCEL, err)
			case tc.reject && !strings.Contains(err.Error(), msgStaticTransition):
				t.Errorf("%s: error %q, want %q", nodePoolCEL, err, msgStaticTransition)
			}
		})
	}
}
