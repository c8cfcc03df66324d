package v1_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
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

// invalidCase is a NodePool the API server must reject with an error naming
// the field and saying which rule it broke.
type invalidCase struct {
	name     string
	nodePool *v1.NodePool
	field    string
	message  string
}

func invalidNodePools() []invalidCase {
	cp := func(np *v1.NodePool) {
		np.Spec.Template.ObjectMeta.Labels = map[string]string{v1.ControlPlaneLabelKey: ""}
	}
	return []invalidCase{
		{"In without values", test.NodePool(withRequirements(req(v1.LabelZone, corev1.NodeSelectorOpIn))),
			"spec.template.spec.requirements[0]", "requirements with operator 'In' must have a value defined"},
		{"minValues above values", test.NodePool(withRequirements(v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}, MinValues: ptr.To(3)})),
			"spec.template.spec.requirements[0]", "requirements with 'minValues' must have at least that many values"},
		{"Gt with two values", test.NodePool(withRequirements(req(v1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "1", "2"))),
			"spec.template.spec.requirements[0]", "must have a single non-negative integer value"},
		{"Lt with a negative value", test.NodePool(withRequirements(req(v1.LabelInstanceCPU, corev1.NodeSelectorOpLt, "-1"))),
			"spec.template.spec.requirements[0]", "must have a single non-negative integer value"},
		{"Gte with a word", test.NodePool(withRequirements(req(v1.LabelInstanceCPU, "Gte", "four"))),
			"spec.template.spec.requirements[0]", "must have a single non-negative integer value"},
		{"Exists with values", test.NodePool(withRequirements(req(v1.LabelZone, corev1.NodeSelectorOpExists, "a"))),
			"spec.template.spec.requirements[0]", "operator 'Exists' or 'DoesNotExist' must not have values"},
		{"unknown operator", test.NodePool(withRequirements(req(v1.LabelZone, "Near", "a"))),
			"spec.template.spec.requirements[0].operator", "Unsupported value: \"Near\""},
		{"101 requirements", test.NodePool(func(np *v1.NodePool) {
			for i := range 101 {
				np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, req(fmt.Sprintf("example.com/k%d", i), corev1.NodeSelectorOpExists))
			}
		}), "spec.template.spec.requirements", "must have at most 100 items"},
		{"restricted karpenter.sh requirement", test.NodePool(withRequirements(req(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, "x"))),
			"spec.template.spec.requirements", `label domain "karpenter.sh" is restricted`},
		{"restricted hostname requirement", test.NodePool(withRequirements(req(v1.LabelHostname, corev1.NodeSelectorOpIn, "node-1"))),
			"spec.template.spec.requirements", `label "kubernetes.io/hostname" is restricted`},
		{"restricted karpenter.sh label", test.NodePool(func(np *v1.NodePool) {
			np.Spec.Template.ObjectMeta.Labels = map[string]string{v1.CapacityTypeLabelKey: "spot"}
		}), "spec.template.metadata.labels", `label domain "karpenter.sh" is restricted`},
		{"restricted hostname label", test.NodePool(func(np *v1.NodePool) {
			np.Spec.Template.ObjectMeta.Labels = map[string]string{v1.LabelHostname: "x"}
		}), "spec.template.metadata.labels", `label "kubernetes.io/hostname" is restricted`},
		{"budget nodes above 100%", test.NodePool(func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "110%"}} }),
			"spec.disruption.budgets[0].nodes", "should match"},
		{"budget nodes not a number", test.NodePool(func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "ten"}} }),
			"spec.disruption.budgets[0].nodes", "should match"},
		{"budget schedule without duration", test.NodePool(func(np *v1.NodePool) {
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1", Schedule: ptr.To("@daily")}}
		}), "spec.disruption.budgets[0]", "'schedule' must be set with 'duration'"},
		{"budget duration without schedule", test.NodePool(func(np *v1.NodePool) {
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1", Duration: &metav1.Duration{Duration: time.Hour}}}
		}), "spec.disruption.budgets[0]", "'schedule' must be set with 'duration'"},
		{"budget duration in seconds", test.NodePool(func(np *v1.NodePool) {
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1", Schedule: ptr.To("@daily"), Duration: &metav1.Duration{Duration: 30 * time.Second}}}
		}), "spec.disruption.budgets[0].duration", "should match"},
		{"budget with an unknown reason", test.NodePool(func(np *v1.NodePool) {
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1", Reasons: []v1.DisruptionReason{"Expired"}}}
		}), "spec.disruption.budgets[0].reasons[0]", "Unsupported value: \"Expired\""},
		{"51 budgets", test.NodePool(func(np *v1.NodePool) {
			for range 51 {
				np.Spec.Disruption.Budgets = append(np.Spec.Disruption.Budgets, v1.Budget{Nodes: "1"})
			}
		}), "spec.disruption.budgets", "must have at most 50 items"},
		{"weight 0", test.NodePool(func(np *v1.NodePool) { np.Spec.Weight = ptr.To[int32](0) }),
			"spec.weight", "should be greater than or equal to 1"},
		{"weight 101", test.NodePool(func(np *v1.NodePool) { np.Spec.Weight = ptr.To[int32](101) }),
			"spec.weight", "should be less than or equal to 100"},
		{"unknown consolidation policy", test.NodePool(func(np *v1.NodePool) { np.Spec.Disruption.ConsolidationPolicy = "Always" }),
			"spec.disruption.consolidationPolicy", "Unsupported value: \"Always\""},
		{"control-plane label allowing spot", test.NodePool(cp),
			"spec.template", "a NodePool for control-plane nodes"},
		{"control-plane taint with spot in the capacity types", test.NodePool(func(np *v1.NodePool) {
			np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: v1.ControlPlaneLabelKey, Effect: corev1.TaintEffectNoSchedule}}
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot", "on-demand")}
		}), "spec.template", "a NodePool for control-plane nodes"},
		{"missing nodeClassRef", test.NodePool(func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef = nil }),
			"spec.template.spec.nodeClassRef", "Required value"},
	}
}

func TestInvalidNodePoolsAreRejected(t *testing.T) {
	ctx := context.Background()
	for _, tc := range invalidNodePools() {
		t.Run(tc.name, func(t *testing.T) {
			assertRejected(t, env.Client.Create(ctx, tc.nodePool), tc.field, tc.message)
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
