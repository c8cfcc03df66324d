package test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestRandomNameIsAUniqueDNSLabel(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		name := RandomName("nodepool")
		suffix, ok := strings.CutPrefix(name, "nodepool-")
		if !ok || len(suffix) != 8 {
			t.Fatalf("RandomName(nodepool) = %q, want nodepool- and 8 characters", name)
		}
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Fatalf("RandomName(nodepool) = %q is not a DNS-1123 label: %v", name, errs)
		}
		if seen[name] {
			t.Fatalf("RandomName returned %q twice", name)
		}
		seen[name] = true
	}
}

func wantClassRef() *v1.NodeClassReference {
	return &v1.NodeClassReference{Group: simv1alpha1.Group, Kind: "SimNodeClass", Name: "default"}
}

func TestNodePoolDefaults(t *testing.T) {
	a, b := NodePool(), NodePool()
	if !strings.HasPrefix(a.Name, "nodepool-") || a.Name == b.Name {
		t.Errorf("names %q and %q: want distinct nodepool-… names", a.Name, b.Name)
	}
	if a.Spec.Template.Spec.Requirements == nil || len(a.Spec.Template.Spec.Requirements) != 0 {
		t.Errorf("requirements %#v, want empty and non-nil (the API requires the field)", a.Spec.Template.Spec.Requirements)
	}
	if diff := cmp.Diff(wantClassRef(), a.Spec.Template.Spec.NodeClassRef); diff != "" {
		t.Errorf("node class ref (-want +got):\n%s", diff)
	}
	if a.Spec.Template.Spec.NodeClassRef == b.Spec.Template.Spec.NodeClassRef {
		t.Error("two NodePools share one NodeClassRef")
	}
}

func TestNodePoolModifiersApplyInOrder(t *testing.T) {
	var sawClassRef bool
	np := NodePool(
		func(np *v1.NodePool) {
			sawClassRef = np.Spec.Template.Spec.NodeClassRef != nil
			np.Name = "first"
			np.Spec.Weight = ptr.To[int32](1)
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{Key: "a", Operator: corev1.NodeSelectorOpExists})
		},
		func(np *v1.NodePool) {
			np.Spec.Weight = ptr.To(*np.Spec.Weight + 10)
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{Key: "b", Operator: corev1.NodeSelectorOpExists})
		},
	)
	if !sawClassRef {
		t.Error("the first modifier ran before the defaults were set")
	}
	if np.Name != "first" {
		t.Errorf("name %q, want the modifier's", np.Name)
	}
	if got := ptr.Deref(np.Spec.Weight, 0); got != 11 {
		t.Errorf("weight %d, want 11 (second modifier sees the first's)", got)
	}
	want := []v1.NodeSelectorRequirementWithMinValues{{Key: "a", Operator: corev1.NodeSelectorOpExists}, {Key: "b", Operator: corev1.NodeSelectorOpExists}}
	if diff := cmp.Diff(want, np.Spec.Template.Spec.Requirements); diff != "" {
		t.Errorf("requirements (-want +got):\n%s", diff)
	}
}

func TestNodeClaimBuilder(t *testing.T) {
	a, b := NodeClaim(), NodeClaim()
	if !strings.HasPrefix(a.Name, "nodeclaim-") || a.Name == b.Name {
		t.Errorf("names %q and %q: want distinct nodeclaim-… names", a.Name, b.Name)
	}
	if a.Spec.Requirements == nil || len(a.Spec.Requirements) != 0 {
		t.Errorf("requirements %#v, want empty and non-nil", a.Spec.Requirements)
	}
	if diff := cmp.Diff(wantClassRef(), a.Spec.NodeClassRef); diff != "" {
		t.Errorf("node class ref (-want +got):\n%s", diff)
	}

	var order []string
	nc := NodeClaim(
		func(nc *v1.NodeClaim) {
			order = append(order, "first")
			nc.Spec.NodeClassRef.Name = "custom"
		},
		func(nc *v1.NodeClaim) {
			order = append(order, "second")
			nc.Spec.NodeClassRef.Name += "-2"
		},
	)
	if diff := cmp.Diff([]string{"first", "second"}, order); diff != "" {
		t.Errorf("modifier order (-want +got):\n%s", diff)
	}
	if nc.Spec.NodeClassRef.Name != "custom-2" {
		t.Errorf("node class name %q, want custom-2", nc.Spec.NodeClassRef.Name)
	}
}

func TestSimNodeClassBuilder(t *testing.T) {
	a, b := SimNodeClass(), SimNodeClass()
	if !strings.HasPrefix(a.Name, "simnodeclass-") || a.Name == b.Name {
		t.Errorf("names %q and %q: want distinct simnodeclass-… names", a.Name, b.Name)
	}
	if diff := cmp.Diff(simv1alpha1.SimNodeClassSpec{}, a.Spec); diff != "" {
		t.Errorf("spec (-want +got), want it empty for the API to default:\n%s", diff)
	}
	nc := SimNodeClass(
		func(nc *simv1alpha1.SimNodeClass) { nc.Spec.SpotMaxPrice = ptr.To("1") },
		func(nc *simv1alpha1.SimNodeClass) { nc.Spec.SpotMaxPrice = ptr.To(*nc.Spec.SpotMaxPrice + ".5") },
	)
	if got := ptr.Deref(nc.Spec.SpotMaxPrice, ""); got != "1.5" {
		t.Errorf("spot max price %q, want 1.5 (modifiers in order)", got)
	}
}
