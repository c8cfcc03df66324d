package lifecycle

import (
	v1 "github.com/capstan-dev/capstan/api/v1"
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

// ReleaseReservation relabels a released instance's NodeClaim or Node:
// karpenter.sh/capacity-type on-demand, and no reservation id, type or
// interruptible label. It reports
// whether anything changed.
func ReleaseReservation(labels map[string]string) bool {
	_, had := labels[v1.LabelCapacityReservationID]
	if labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeOnDemand && !had {
		return false
	}
	labels[v1.CapacityTypeLabelKey] = v1.CapacityTypeOnDemand
	delete(labels, v1.LabelCapacityReservationID)
	delete(labels, v1.LabelCapacityReservationType)
	delete(labels, v1.LabelCapacityReservationInterruptible)
	return true
}
