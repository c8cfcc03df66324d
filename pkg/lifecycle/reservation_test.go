package lifecycle

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
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

// TestReservationEnded applies the relabelling as both appliers do (the
// effects package's mutations) and checks what is left.
func TestReservationEnded(t *testing.T) {
	labels := func() map[string]string {
		return map[string]string{v1.CapacityTypeLabelKey: v1.CapacityTypeReserved, v1.LabelCapacityReservationID: "cr-1", "team": "a",
			v1.LabelCapacityReservationType: v1.ReservationTypeDefault, v1.LabelCapacityReservationInterruptible: "false"}
	}
	nc := &v1.NodeClaim{}
	nc.Name, nc.Labels = "nc", labels()
	node := &corev1.Node{}
	node.Name, node.Labels = "node", labels()
	instance := &v1.NodeClaim{}
	instance.Labels = map[string]string{v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand}
	apply := func(effs []effects.Effect) (events []string) {
		for _, eff := range effs {
			var o metav1.Object = nc
			switch e := eff.(type) {
			case effects.MergeMetadata:
				if e.Object.Kind == effects.KindNode {
					o = node
				}
				effects.MergeInto(o, e)
			case effects.RemoveLabels:
				if e.Object.Kind == effects.KindNode {
					o = node
				}
				effects.RemoveLabelsFrom(o, e.Keys)
			case effects.Event:
				events = append(events, e.Object.Name+": "+e.Message)
			default:
				t.Fatalf("unexpected effect %T", eff)
			}
		}
		return events
	}
	if effs := ReservationEnded(nc, node, nc, nil); effs != nil {
		t.Fatalf("relabelled while still in its reservation: %v", effs)
	}
	msg := "capacity reservation cr-1 ended; the instance runs on as on-demand, at the on-demand price"
	if diff := cmp.Diff([]string{"nc: " + msg, "node: " + msg}, apply(ReservationEnded(nc, node, instance, nil))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	want := map[string]string{v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand, "team": "a"}
	if diff := cmp.Diff(want, nc.Labels); diff != "" {
		t.Errorf("nodeclaim labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, node.Labels); diff != "" {
		t.Errorf("node labels (-want +got):\n%s", diff)
	}
	if effs := ReservationEnded(nc, node, instance, nil); effs != nil {
		t.Errorf("a second release changed %v", effs)
	}
	// A Node relabelled already is left alone; simulate names the price.
	nc.Labels, node.Labels = labels(), want
	price := 0.096
	msg = "capacity reservation cr-1 ended; the instance runs on as on-demand at 0.0960/h"
	if diff := cmp.Diff([]string{"nc: " + msg}, apply(ReservationEnded(nc, node, instance, &price))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
