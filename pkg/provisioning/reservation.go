package provisioning

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// bookCapacity decides the claim's capacity type. A free slot in a
// reservation beats everything: the claim is booked into the cheapest one
// it fits. Otherwise it launches as spot or on-demand and must not fall
// into a reservation it has not booked.
func (s *solver) bookCapacity(c *claim, options []*itData) bool {
	best, bestPrice := "", 0.0
	for _, it := range options {
		for _, o := range it.it.Offerings {
			if o.ReservationID == "" || !o.CompatibleWith(c.reqs) || s.slots[o.ReservationID] <= 0 {
				continue
			}
			if best == "" || o.Price < bestPrice {
				best, bestPrice = o.ReservationID, o.Price
			}
		}
	}
	if best != "" {
		c.reservation = best
		s.slots[best]--
		c.reqs = c.reqs.Intersection(scheduling.NewRequirements(
			scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeReserved),
			scheduling.NewRequirement(v1.LabelCapacityReservationID, corev1.NodeSelectorOpIn, best),
		))
		s.pinned = filterInto(s.pinned, options, c.reqs, c.requests, best, s.slots).options
		c.options, c.settled = s.interned(s.pinned), true
		return true
	}
	withoutReserved := c.reqs.Intersection(scheduling.NewRequirements(
		scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpNotIn, v1.CapacityTypeReserved),
	))
	s.pinned = filterInto(s.pinned, options, withoutReserved, c.requests, "", s.slots).options
	if len(s.pinned) > 0 {
		if reqs, ok := s.meetMinValues(withoutReserved, s.pinned); ok {
			c.reqs, c.options, c.settled = reqs, s.interned(s.pinned), true
			return true
		}
	}
	if s.opts.ReservationMode == ReservationFallback {
		c.options = s.interned(options)
		return true
	}
	return false
}
