package clustermetrics

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
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

func TestPrice(t *testing.T) {
	it := test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8, Price: 1})
	it.Offerings = append(it.Offerings, &cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1", Price: 1e-7})
	nc := func(ct, reservation string) *v1.NodeClaim {
		n := &v1.NodeClaim{}
		n.Labels = map[string]string{v1.LabelInstanceType: "m.large", v1.LabelZone: "zone-a", v1.CapacityTypeLabelKey: ct}
		if reservation != "" {
			n.Labels[v1.LabelCapacityReservationID] = reservation
		}
		return n
	}
	for _, tc := range []struct {
		nc   *v1.NodeClaim
		want float64
		ok   bool
	}{
		{nc(v1.CapacityTypeOnDemand, ""), 1, true},
		{nc(v1.CapacityTypeSpot, ""), 0.4, true},
		{nc(v1.CapacityTypeReserved, "cr-1"), 1e-7, true},
		{&v1.NodeClaim{}, 0, false},
	} {
		got, ok := Price(tc.nc, []*cloudprovider.InstanceType{it})
		if ok != tc.ok || got != tc.want {
			t.Errorf("Price(%v) = %v, %v; want %v, %v", tc.nc.Labels, got, ok, tc.want, tc.ok)
		}
	}
}
