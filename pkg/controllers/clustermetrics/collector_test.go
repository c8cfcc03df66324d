package clustermetrics

import (
	"context"
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestPhase(t *testing.T) {
	with := func(conds ...string) *v1.NodeClaim {
		nc := &v1.NodeClaim{}
		for _, c := range conds {
			nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue})
		}
		return nc
	}
	now := metav1.Now()
	deleting := with(v1.ConditionTypeLaunched)
	deleting.DeletionTimestamp = &now
	for _, tc := range []struct {
		nc   *v1.NodeClaim
		want string
	}{
		{with(), PhaseLaunching},
		{with(v1.ConditionTypeLaunched), PhaseRegistering},
		{with(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered), PhaseInitializing},
		{with(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized), PhaseReady},
		{deleting, PhaseDeleting},
	} {
		if got := Phase(tc.nc); got != tc.want {
			t.Errorf("Phase = %s, want %s", got, tc.want)
		}
	}
}

// The cost gauges, read from a real API server: a NodePool's launched
// NodeClaims at their offerings' prices, in all and by capacity type; a
// deleting NodeClaim costs nothing more.
func TestCollectorCost(t *testing.T) {
	env := test.EnvironmentFor(t)
	ctx := context.Background()
	it := test.InstanceType(test.InstanceTypeOptions{Name: "m5.large", CPU: 2, Memory: 8, Price: 0.10})
	np := test.NodePool(func(np *v1.NodePool) { np.Name = "web" })
	if err := env.Client.Create(ctx, np); err != nil {
		t.Fatal(err)
	}
	claim := func(name, capacityType string, deleting bool) {
		nc := test.NodeClaim(func(nc *v1.NodeClaim) {
			nc.Name = name
			nc.Labels = map[string]string{v1.NodePoolLabelKey: "web", v1.LabelInstanceType: "m5.large", v1.LabelZone: "zone-a", v1.CapacityTypeLabelKey: capacityType}
			if deleting {
				nc.Finalizers = []string{v1.TerminationFinalizer}
			}
		})
		if err := env.Client.Create(ctx, nc); err != nil {
			t.Fatal(err)
		}
		if deleting {
			if err := env.Client.Delete(ctx, nc); err != nil {
				t.Fatal(err)
			}
		}
	}
	claim("od-1", v1.CapacityTypeOnDemand, false)
	claim("od-2", v1.CapacityTypeOnDemand, false)
	claim("spot-1", v1.CapacityTypeSpot, false)
	claim("spot-gone", v1.CapacityTypeSpot, true)
	reg := prometheus.NewRegistry()
	reg.MustRegister(New(Deps{Reader: env.Client, Cloud: fake.New(it)}))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if !strings.HasSuffix(f.GetName(), "cost_per_hour") {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			got[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = math.Round(m.GetGauge().GetValue()*1000) / 1000
		}
	}
	want := map[string]float64{
		"capstan_nodepool_cost_per_hour{nodepool=web}":                         0.1 + 0.1 + 0.04,
		"capstan_capacity_cost_per_hour{capacity_type=on-demand,nodepool=web}": 0.2,
		"capstan_capacity_cost_per_hour{capacity_type=spot,nodepool=web}":      0.04,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cost gauges (-want +got):\n%s", diff)
	}
}

// The cost gauges report the prices every decision sees: a NodeOverlay
// halving spot halves what the spot NodeClaim costs.
func TestCollectorCostWithNodeOverlay(t *testing.T) {
	env := test.EnvironmentFor(t)
	ctx := context.Background()
	it := test.InstanceType(test.InstanceTypeOptions{Name: "m5.large", CPU: 2, Memory: 8, Price: 0.10})
	np := test.NodePool(func(np *v1.NodePool) { np.Name = "batch" })
	o := test.NodeOverlay("half-spot", func(o *v1alpha1.NodeOverlay) {
		o.Spec.Requirements = []v1alpha1.NodeSelectorRequirement{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot}}}
		o.Spec.PriceAdjustment = ptr.To("-50%")
	})
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Name = "batch-spot"
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "batch", v1.LabelInstanceType: "m5.large", v1.LabelZone: "zone-a", v1.CapacityTypeLabelKey: v1.CapacityTypeSpot}
	})
	for _, obj := range []client.Object{np, o, nc} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(New(Deps{Reader: env.Client, Cloud: fake.New(it)}))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "capstan_nodepool_cost_per_hour" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() == "batch" {
				if got := math.Round(m.GetGauge().GetValue()*1000) / 1000; got != 0.02 {
					t.Errorf("capstan_nodepool_cost_per_hour{nodepool=batch} = %v, want 0.02 (spot 0.04 less 50%%)", got)
				}
				return
			}
		}
	}
	t.Error("no capstan_nodepool_cost_per_hour for nodepool batch")
}
