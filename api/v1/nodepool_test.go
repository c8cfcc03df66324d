package v1_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

func req(key string, op corev1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirementWithMinValues {
	return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

func withRequirements(reqs ...v1.NodeSelectorRequirementWithMinValues) func(*v1.NodePool) {
	return func(np *v1.NodePool) { np.Spec.Template.Spec.Requirements = reqs }
}

func TestInvalidNodePoolsAreRejected(t *testing.T) {
	ctx := context.Background()
	for _, tc := range test.InvalidNodePools() {
		t.Run(tc.Name, func(t *testing.T) {
			assertRejected(t, env.Client.Create(ctx, tc.NodePool), tc.Field, tc.Message)
		})
	}
}

// Manifests as the reference's documentation writes them are accepted:
// every rule is total over the optional fields they leave out.
func TestValidNodePoolsAreAccepted(t *testing.T) {
	ctx := context.Background()
	for _, tc := range test.ValidNodePools() {
		t.Run(tc.Name, func(t *testing.T) {
			if err := env.Client.Create(ctx, tc.NodePool); err != nil {
				t.Fatalf("rejected: %v", err)
			}
		})
	}
}

func assertRejected(t *testing.T, err error, field, message string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want rejection at %s: %s", field, message)
	}
	if !strings.Contains(err.Error(), field+":") || !strings.Contains(err.Error(), message) {
		t.Fatalf("error %q\ndoes not name field %q with %q", err, field, message)
	}
}

// A control-plane NodePool is fine once spot is excluded.
func TestControlPlaneNodePoolWithoutSpot(t *testing.T) {
	ctx := context.Background()
	for _, r := range []v1.NodeSelectorRequirementWithMinValues{
		req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "on-demand", "reserved"),
		req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpNotIn, "spot"),
	} {
		np := test.NodePool(withRequirements(r), func(np *v1.NodePool) {
			np.Spec.Template.ObjectMeta.Labels = map[string]string{v1.ControlPlaneLabelKey: ""}
		})
		if err := env.Client.Create(ctx, np); err != nil {
			t.Errorf("requirement %v: %v", r, err)
		}
	}
}

type immutabilityCase struct {
	name    string
	mutate  func(*v1.NodeClassReference)
	message string
}

func immutabilityCases() []immutabilityCase {
	return []immutabilityCase{
		{"group", func(r *v1.NodeClassReference) { r.Group = "karpenter.k8s.aws" }, "nodeClassRef.group is immutable"},
		{"kind", func(r *v1.NodeClassReference) { r.Kind = "EC2NodeClass" }, "nodeClassRef.kind is immutable"},
		{"name", func(r *v1.NodeClassReference) { r.Name = "other" }, ""},
	}
}

func TestNodeClassRefGroupAndKindAreImmutable(t *testing.T) {
	ctx := context.Background()
	for _, tc := range immutabilityCases() {
		t.Run(tc.name, func(t *testing.T) {
			np := test.NodePool()
			if err := env.Client.Create(ctx, np); err != nil {
				t.Fatal(err)
			}
			tc.mutate(np.Spec.Template.Spec.NodeClassRef)
			err := env.Client.Update(ctx, np)
			if tc.message == "" {
				if err != nil {
					t.Fatalf("update rejected: %v", err)
				}
				return
			}
			assertRejected(t, err, "spec.template.spec.nodeClassRef", tc.message)
		})
	}
}

func TestNodePoolDefaults(t *testing.T) {
	ctx := context.Background()
	np := test.NodePool()
	if err := env.Client.Create(ctx, np); err != nil {
		t.Fatal(err)
	}
	got := &v1.NodePool{}
	if err := env.Client.Get(ctx, keyOf(np), got); err != nil {
		t.Fatal(err)
	}
	want := v1.Disruption{
		ConsolidateAfter:    v1.MustParseNillableDuration("0s"),
		ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized,
		Budgets:             []v1.Budget{{Nodes: "10%"}},
	}
	if diff := cmp.Diff(want, got.Spec.Disruption); diff != "" {
		t.Errorf("disruption defaults (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(v1.MustParseNillableDuration("720h"), got.Spec.Template.Spec.ExpireAfter); diff != "" {
		t.Errorf("expireAfter default (-want +got):\n%s", diff)
	}
	if got.Spec.Weight != nil {
		t.Errorf("weight defaulted to %d; want unset", *got.Spec.Weight)
	}
}

func TestNeverDurationsRoundTrip(t *testing.T) {
	ctx := context.Background()
	np := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.ExpireAfter = v1.MustParseNillableDuration(v1.Never)
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never)
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("100")}
	})
	if err := env.Client.Create(ctx, np); err != nil {
		t.Fatal(err)
	}
	got := &v1.NodePool{}
	if err := env.Client.Get(ctx, keyOf(np), got); err != nil {
		t.Fatal(err)
	}
	if !got.Spec.Template.Spec.ExpireAfter.Never || !got.Spec.Disruption.ConsolidateAfter.Never {
		t.Errorf("Never not kept: expireAfter %q consolidateAfter %q", got.Spec.Template.Spec.ExpireAfter, got.Spec.Disruption.ConsolidateAfter)
	}
}

// Durations are strings on the wire; these cases cannot be built from the
// typed API, so they go through unstructured objects.
func TestInvalidDurationsAreRejected(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, path, value, field string
	}{
		{"expireAfter in days", "spec.template.spec.expireAfter", "30d", "spec.template.spec.expireAfter"},
		{"expireAfter lowercase never", "spec.template.spec.expireAfter", "never", "spec.template.spec.expireAfter"},
		{"consolidateAfter a word", "spec.disruption.consolidateAfter", "forever", "spec.disruption.consolidateAfter"},
		{"terminationGracePeriod Never", "spec.template.spec.terminationGracePeriod", "Never", "spec.template.spec.terminationGracePeriod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(test.NodePool())
			if err != nil {
				t.Fatal(err)
			}
			obj := &unstructured.Unstructured{Object: u}
			obj.SetAPIVersion(v1.SchemeGroupVersion.String())
			obj.SetKind("NodePool")
			if err := unstructured.SetNestedField(obj.Object, tc.value, strings.Split(tc.path, ".")...); err != nil {
				t.Fatal(err)
			}
			assertRejected(t, env.Client.Create(ctx, obj), tc.field, "should match")
		})
	}
}

func keyOf(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }
