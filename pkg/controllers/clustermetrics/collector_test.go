package clustermetrics

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
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
