package simnodeclass

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// Decision is what the reconciler writes back and when it looks again.
type Decision struct {
	// Status is the SimNodeClass's whole new status.
	Status simv1alpha1.SimNodeClassStatus
	// RequeueAfter is positive: the time to the next start or end of a
	// reservation the spec selects, or refresh when that is sooner or
	// there is none.
	RequeueAfter time.Duration
}

// Step resolves nc at now against the cloud's reservations. The
// reservation list is replaced by the resolver's; its conditions are
// merged into the existing ones with nc's generation as
// ObservedGeneration, keeping the LastTransitionTime of a condition whose
// status did not change. refresh must be positive. Step reads no clock and
// mutates none of its inputs.
func Step(nc *simv1alpha1.SimNodeClass, reservations []sim.Reservation, now time.Time, refresh time.Duration) Decision {
	resolved := sim.ResolveNodeClass(nc.Spec, reservations, now)
	status := *nc.Status.DeepCopy()
	status.CapacityReservations = resolved.CapacityReservations
	for _, c := range resolved.Conditions {
		c.ObservedGeneration = nc.Generation
		meta.SetStatusCondition(&status.Conditions, c)
	}
	requeue := refresh
	if next, ok := sim.NextReservationChange(Selected(nc.Spec, reservations), now); ok {
		requeue = min(requeue, next.Sub(now))
	}
	return Decision{Status: status, RequeueAfter: requeue}
}

// Selected are the reservations some term of spec selects, active or not:
// only their starts and ends can change the status (an unselected
// reservation never shows in it, decision 1).
func Selected(spec simv1alpha1.SimNodeClassSpec, reservations []sim.Reservation) []sim.Reservation {
	var out []sim.Reservation
	for _, r := range reservations {
		if slices.ContainsFunc(spec.CapacityReservationSelectorTerms, func(t simv1alpha1.CapacityReservationSelectorTerm) bool {
			return sim.Selects(t, r)
		}) {
			out = append(out, r)
		}
	}
	return out
}
