package v1_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestNodeClaimSpecIsImmutable(t *testing.T) {
	ctx := context.Background()
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	})
	if err := env.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	nc.Spec.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("4")
	assertRejected(t, env.Client.Update(ctx, nc), "spec", "spec is immutable")

	// Status and metadata still change.
	got := &v1.NodeClaim{}
	if err := env.Client.Get(ctx, keyOf(nc), got); err != nil {
		t.Fatal(err)
	}
	got.Status.ProviderID = "sim://zone-a/i-1"
	if err := env.Client.Status().Update(ctx, got); err != nil {
		t.Errorf("status update: %v", err)
	}
}

// NodeClaims share the requirement type with NodePools, and its rules;
// the restricted label domains do not apply, since Capstan itself writes
// karpenter.sh/nodepool into a NodeClaim's requirements.
func TestNodeClaimRequirementsAreValidated(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		requirement v1.NodeSelectorRequirementWithMinValues
		message     string
	}{
		{req(v1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "x"), "must have a single positive integer value"},
		{req(v1.LabelZone, corev1.NodeSelectorOpIn), "requirements with operator 'In' must have a value defined"},
		{req(v1.LabelZone, corev1.NodeSelectorOpDoesNotExist, "a"), "operator 'Exists' or 'DoesNotExist' must not have values"},
		{req(v1.LabelInstanceCPU, corev1.NodeSelectorOpLt), "must have a single positive integer value"},
		{v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}, MinValues: ptr.To(2)}, "requirements with 'minValues' must have at least that many values"},
	} {
		nc := test.NodeClaim(func(nc *v1.NodeClaim) {
			nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{tc.requirement}
		})
		assertRejected(t, env.Client.Create(ctx, nc), "spec.requirements[0]", tc.message)
	}
	// What the provisioner writes: its NodePool, and Exists and
	// DoesNotExist without values.
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			req(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, "default"),
			req("example.com/team", corev1.NodeSelectorOpExists),
			req("example.com/spare", corev1.NodeSelectorOpDoesNotExist),
			req(v1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "3"),
		}
	})
	if err := env.Client.Create(ctx, nc); err != nil {
		t.Errorf("NodeClaim the provisioner would write rejected: %v", err)
	}
}

func TestNodeClaimDefaults(t *testing.T) {
	ctx := context.Background()
	nc := test.NodeClaim()
	if err := env.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if got := nc.Spec.ExpireAfter.String(); got != "720h0m0s" {
		t.Errorf("expireAfter = %q, want the 720h default", got)
	}
}
