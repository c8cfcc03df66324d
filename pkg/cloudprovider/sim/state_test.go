package sim_test

import (
	"context"
	"testing"
	"time"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

func TestDurableInventory(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	ctx := context.Background()
	nc, err := f.cloud.Create(ctx, claim("nc", in(v1.LabelInstanceType, "m5.large")))
	if err != nil {
		t.Fatal(err)
	}
	// Another cloud over the same file sees the instance: a crashed
	// controller leaks nothing garbage collection cannot find.
	cat, _ := catalog.Load()
	again, err := sim.New(sim.Options{Profile: f.profile, Catalog: cat, Clock: f.clock, StatePath: f.state, NodeClasses: f.classes})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := again.List(ctx)
	if len(list) != 1 || list[0].Status.ProviderID != nc.Status.ProviderID {
		t.Fatalf("reloaded inventory %+v", list)
	}
	if err := again.Delete(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if err := again.Delete(ctx, nc); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("second delete: %v, want not found", err)
	}
	s, err := sim.LoadState(f.state)
	if err != nil || s.Reservations["cr-small"].Used != 0 {
		t.Errorf("state after delete: %v %+v", err, s)
	}
	if nodes := f.kubelet.Due(f.clock.Now().Add(2 * time.Second)); len(nodes) != 1 || nodes[0].Spec.ProviderID != nc.Status.ProviderID {
		t.Errorf("kubelet nodes %v", nodes)
	}
}
