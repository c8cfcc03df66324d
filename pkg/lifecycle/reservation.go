package lifecycle

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// ReservationReleased reports whether a NodeClaim launched into a
// capacity reservation runs outside it now, as the cloud reports the
// instance (CloudProvider.Get): the reservation expired or was cancelled,
// and the instance carries on as on-demand (seed 002). Only that way:
// an instance never joins a reservation after launch.
func ReservationReleased(nc, instance *v1.NodeClaim) bool {
	return nc.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeReserved &&
		instance.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeOnDemand
}

// reservationLabels are the labels a released instance's NodeClaim and
// Node lose.
var reservationLabels = []string{v1.LabelCapacityReservationID, v1.LabelCapacityReservationType, v1.LabelCapacityReservationInterruptible}

// ReservationEnded relabels a NodeClaim whose instance left its capacity
// reservation (ReservationReleased), and its Node (nil before it
// registers): karpenter.sh/capacity-type on-demand and no reservation
// labels, from then on priced (metrics, explain, consolidation) as
// on-demand, with a CapacityReservationEnded event on each relabelled.
// price is the on-demand price per hour when the caller knows it
// (simulate reads its cloud's), for the event's message. Nothing when
// the reservation has not ended.
func ReservationEnded(nc *v1.NodeClaim, node *corev1.Node, instance *v1.NodeClaim, price *float64) []effects.Effect {
	if !ReservationReleased(nc, instance) {
		return nil
	}
	id := nc.Labels[v1.LabelCapacityReservationID]
	msg := fmt.Sprintf("capacity reservation %s ended; the instance runs on as on-demand, at the on-demand price", id)
	if price != nil {
		msg = fmt.Sprintf("capacity reservation %s ended; the instance runs on as on-demand at %.4f/h", id, *price)
	}
	out := relabelOnDemand(effects.NodeClaimRef(nc.Name), msg)
	if node != nil && reserved(node.Labels) {
		out = append(out, relabelOnDemand(effects.NodeRef(node.Name), msg)...)
	}
	return out
}

// reserved reports whether labels still say reserved capacity.
func reserved(labels map[string]string) bool {
	_, had := labels[v1.LabelCapacityReservationID]
	return had || labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeOnDemand
}

func relabelOnDemand(ref effects.Ref, msg string) []effects.Effect {
	return []effects.Effect{
		effects.MergeMetadata{Object: ref, Labels: map[string]string{v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand}},
		effects.RemoveLabels{Object: ref, Keys: reservationLabels},
		effects.Event{Object: ref, Type: corev1.EventTypeNormal, Reason: "CapacityReservationEnded", Action: "Relabel", Message: msg},
	}
}
