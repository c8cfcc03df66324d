package lifecycle

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestReservationReleased(t *testing.T) {
	claim := func(labels map[string]string) *v1.NodeClaim {
		nc := &v1.NodeClaim{}
		nc.Labels = labels
		return nc
	}
	reserved := map[string]string{v1.CapacityTypeLabelKey: v1.CapacityTypeReserved, v1.LabelCapacityReservationID: "cr-1"}
	onDemand := map[string]string{v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand}
	for _, tc := range []struct {
		name         string
		nc, instance map[string]string
		want         bool
	}{
		{"still in its reservation", reserved, reserved, false},
		{"the reservation ended: on-demand now", reserved, onDemand, true},
		{"launched on-demand", onDemand, onDemand, false},
		{"never the reverse", onDemand, reserved, false},
		{"spot is not touched", map[string]string{v1.CapacityTypeLabelKey: v1.CapacityTypeSpot}, onDemand, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReservationReleased(claim(tc.nc), claim(tc.instance)); got != tc.want {
				t.Errorf("ReservationReleased = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestReleaseReservation(t *testing.T) {
	labels := map[string]string{v1.CapacityTypeLabelKey: v1.CapacityTypeReserved, v1.LabelCapacityReservationID: "cr-1", "team": "a",
		v1.LabelCapacityReservationType: v1.ReservationTypeDefault, v1.LabelCapacityReservationInterruptible: "false"}
	if !ReleaseReservation(labels) {
		t.Fatal("first release reported no change")
	}
	if diff := cmp.Diff(map[string]string{v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand, "team": "a"}, labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if ReleaseReservation(labels) {
		t.Error("second release reported a change")
	}
}
