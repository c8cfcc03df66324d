package v1_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// Every manifest under examples/api is accepted as written, and the
// server's defaults fill what it leaves out.
func TestExamplesAreAccepted(t *testing.T) {
	ctx := context.Background()
	var manifests []test.Manifest
	for _, pattern := range []string{"examples/api/*.yaml", "examples/*/nodepool.yaml"} {
		m, err := test.ReadManifests(pattern)
		if err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, m...)
	}
	if len(manifests) < 5 {
		t.Fatalf("found %d example manifests; want the documented ones", len(manifests))
	}
	for _, m := range manifests {
		if err := env.Client.Create(ctx, m.Object); err != nil {
			t.Errorf("%s: %v", m.Path, err)
		}
	}

	minimal := &v1.NodePool{}
	if err := env.Client.Get(ctx, keyFor("default"), minimal); err != nil {
		t.Fatal(err)
	}
	wantDisruption := v1.Disruption{
		ConsolidateAfter:    v1.MustParseNillableDuration("0s"),
		ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized,
		Budgets:             []v1.Budget{{Nodes: "10%"}},
	}
	if diff := cmp.Diff(wantDisruption, minimal.Spec.Disruption); diff != "" {
		t.Errorf("minimal NodePool disruption defaults (-want +got):\n%s", diff)
	}
	if got := minimal.Spec.Template.Spec.ExpireAfter.String(); got != "720h0m0s" {
		t.Errorf("minimal NodePool expireAfter = %q, want 720h", got)
	}

	budgets := &v1.NodePool{}
	if err := env.Client.Get(ctx, keyFor("budgets"), budgets); err != nil {
		t.Fatal(err)
	}
	if got := len(budgets.Spec.Disruption.Budgets); got != 3 {
		t.Errorf("budgets example keeps %d budgets, want 3 (defaults must not replace them)", got)
	}

	snc := &simv1alpha1.SimNodeClass{}
	if err := env.Client.Get(ctx, keyFor("default"), snc); err != nil {
		t.Fatal(err)
	}
	if snc.Spec.EvictionPolicy != simv1alpha1.EvictionPolicyDeallocate {
		t.Errorf("SimNodeClass evictionPolicy = %q, want the Deallocate default", snc.Spec.EvictionPolicy)
	}

	// The typed API reads back exactly what the server stored.
	for _, m := range manifests {
		if m.Object.GetKind() != "NodePool" {
			continue
		}
		stored := &v1.NodePool{}
		if err := env.Client.Get(ctx, keyFor(m.Object.GetName()), stored); err != nil {
			t.Fatal(err)
		}
		if _, err := runtime.DefaultUnstructuredConverter.ToUnstructured(stored); err != nil {
			t.Errorf("%s does not convert back: %v", m.Path, err)
		}
	}
}
