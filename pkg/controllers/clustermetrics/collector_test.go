package clustermetrics

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
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
