package cloudprovider

import (
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Unlimited is the available count of ordinary spot and on-demand
// offerings: the cloud does not say how many it has.
const Unlimited = math.MaxInt

// InstanceType is a machine shape a NodePool may launch, with the labels
// its nodes carry, its resources and where and how it can be bought.
type InstanceType struct {
	Name string
	// Requirements are the labels a node of this type carries; zone and
	// capacity type cover every offering.
	Requirements scheduling.Requirements
	// Capacity is the machine's resources before overhead.
	Capacity corev1.ResourceList
	Overhead Overhead
	// Offerings are the zone × capacity type (× reservation) purchase
	// options.
	Offerings Offerings
}

// Overhead is what a node reserves for itself, subtracted from capacity.
type Overhead struct {
	KubeReserved      corev1.ResourceList
	SystemReserved    corev1.ResourceList
	EvictionThreshold corev1.ResourceList
}

// Total is the sum of all reservations.
func (o Overhead) Total() corev1.ResourceList {
	total := corev1.ResourceList{}
	for _, rl := range []corev1.ResourceList{o.KubeReserved, o.SystemReserved, o.EvictionThreshold} {
		for name, q := range rl {
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	return total
}

// Allocatable is capacity less overhead, what pods can request.
func (it *InstanceType) Allocatable() corev1.ResourceList {
	alloc := corev1.ResourceList{}
	overhead := it.Overhead.Total()
	for name, q := range it.Capacity {
		a := q.DeepCopy()
		if o, ok := overhead[name]; ok {
			a.Sub(o)
		}
		if a.Sign() < 0 {
			a = resource.Quantity{}
		}
		alloc[name] = a
	}
	return alloc
}

// Offering is one way to buy an instance type: a zone, a capacity type and,
// for reserved capacity, the reservation.
type Offering struct {
	Zone string
	// ZoneID is the zone's topology.k8s.aws/zone-id, empty where the
	// provider has none (its nodes then lack the label).
	ZoneID        string
	CapacityType  string
	ReservationID string
	// ReservationType (v1.ReservationTypeDefault or
	// v1.ReservationTypeCapacityBlock) and ReservationInterruptible
	// describe a reserved offering's reservation; a reserved offering
	// without a type is a default one.
	ReservationType          string
	ReservationInterruptible bool
	// Price is per hour. Reserved offerings cost on-demand / 10^7 so any
	// reservation beats any other offering (decision 15).
	Price float64
	// Available is how many more instances can be had: Unlimited, 0 when
	// unavailable, or a reservation's free slots.
	Available int
}

// Requirements are the labels a node bought through this offering carries.
func (o *Offering) Requirements() scheduling.Requirements {
	reqs := scheduling.NewRequirements(
		scheduling.NewRequirement(v1.LabelZone, corev1.NodeSelectorOpIn, o.Zone),
		scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, o.CapacityType),
	)
	if o.ReservationID != "" {
		reqs.Add(
			scheduling.NewRequirement(v1.LabelCapacityReservationID, corev1.NodeSelectorOpIn, o.ReservationID),
			scheduling.NewRequirement(v1.LabelCapacityReservationType, corev1.NodeSelectorOpIn, o.reservationType()),
			scheduling.NewRequirement(v1.LabelCapacityReservationInterruptible, corev1.NodeSelectorOpIn, strconv.FormatBool(o.ReservationInterruptible)),
		)
	}
	if o.ZoneID != "" {
		reqs.Add(scheduling.NewRequirement(v1.LabelZoneID, corev1.NodeSelectorOpIn, o.ZoneID))
	}
	return reqs
}

// ReservationLabels are the labels a node launched through a reserved
// offering carries for its reservation: id, type and interruptible;
// none for other offerings.
func (o *Offering) ReservationLabels() map[string]string {
	if o.ReservationID == "" {
		return nil
	}
	return map[string]string{
		v1.LabelCapacityReservationID:            o.ReservationID,
		v1.LabelCapacityReservationType:          o.reservationType(),
		v1.LabelCapacityReservationInterruptible: strconv.FormatBool(o.ReservationInterruptible),
	}
}

func (o *Offering) reservationType() string {
	if o.ReservationType == "" {
		return v1.ReservationTypeDefault
	}
	return o.ReservationType
}

// IsAvailable reports whether at least one instance can be bought.
func (o *Offering) IsAvailable() bool { return o.Available > 0 }

// Offerings is a list of offerings.
type Offerings []*Offering

// Available keeps the offerings with capacity left.
func (ofs Offerings) Available() Offerings {
	return slices.DeleteFunc(slices.Clone(ofs), func(o *Offering) bool { return !o.IsAvailable() })
}

// Compatible keeps the offerings whose zone (and zone ID), capacity type
// and reservation the requirements allow.
func (ofs Offerings) Compatible(reqs scheduling.Requirements) Offerings {
	var out Offerings
	for _, o := range ofs {
		if o.CompatibleWith(reqs) {
			out = append(out, o)
		}
	}
	return out
}

// CompatibleWith reports whether reqs allow this offering, without
// allocating.
func (o *Offering) CompatibleWith(reqs scheduling.Requirements) bool {
	return NewOfferingFilter(reqs).Allows(o)
}

// OfferingFilter is what requirements say of offerings, looked up once:
// the solver asks it of every offering of hundreds of instance types.
type OfferingFilter struct {
	zone, capacityType, zoneID, reservationID *scheduling.Requirement
	reservationType, reservationInterruptible *scheduling.Requirement
}

// NewOfferingFilter reads the offering keys of reqs.
func NewOfferingFilter(reqs scheduling.Requirements) OfferingFilter {
	return OfferingFilter{
		zone:          reqs[v1.LabelZone],
		capacityType:  reqs[v1.CapacityTypeLabelKey],
		zoneID:        reqs[v1.LabelZoneID],
		reservationID: reqs[v1.LabelCapacityReservationID],

		reservationType:          reqs[v1.LabelCapacityReservationType],
		reservationInterruptible: reqs[v1.LabelCapacityReservationInterruptible],
	}
}

// Allows reports whether the requirements allow the offering.
func (f OfferingFilter) Allows(o *Offering) bool {
	if f.zone != nil && !f.zone.Has(o.Zone) {
		return false
	}
	if f.capacityType != nil && !f.capacityType.Has(o.CapacityType) {
		return false
	}
	// The zone ID follows the zone, so requirements may pick a zone by
	// either; an offering without one allows only its absence.
	if r := f.zoneID; r != nil {
		if o.ZoneID == "" && !r.AllowsAbsent() || o.ZoneID != "" && !r.Has(o.ZoneID) {
			return false
		}
	}
	// The reservation's labels exist on reserved offerings only.
	if !allowsReservation(f.reservationID, o, o.ReservationID) {
		return false
	}
	if f.reservationType != nil && !allowsReservation(f.reservationType, o, o.reservationType()) {
		return false
	}
	if f.reservationInterruptible != nil && !allowsReservation(f.reservationInterruptible, o, strconv.FormatBool(o.ReservationInterruptible)) {
		return false
	}
	return true
}

// allowsReservation: r (nil allows all) allows the value of a label
// only reserved offerings have, or its absence on the others.
func allowsReservation(r *scheduling.Requirement, o *Offering, value string) bool {
	switch {
	case r == nil:
		return true
	case o.ReservationID == "":
		return r.AllowsAbsent()
	}
	return r.Has(value)
}

// Cheapest is the lowest-priced offering, nil for none.
func (ofs Offerings) Cheapest() *Offering {
	var best *Offering
	for _, o := range ofs {
		if best == nil || o.Price < best.Price {
			best = o
		}
	}
	return best
}

// String names the offering as logs and errors show it.
func (o *Offering) String() string {
	var b strings.Builder
	b.WriteString(o.CapacityType)
	b.WriteByte('/')
	b.WriteString(o.Zone)
	if o.ReservationID != "" {
		b.WriteByte('/')
		b.WriteString(o.ReservationID)
	}
	return b.String()
}

// LaunchedPrice is the hourly price of a launched NodeClaim: the offering of its
// instance type in its zone, capacity type and reservation; false when
// unknown.
func LaunchedPrice(nc *v1.NodeClaim, its []*InstanceType) (float64, bool) {
	l := nc.Labels
	for _, it := range its {
		if it.Name != l[v1.LabelInstanceType] {
			continue
		}
		for _, o := range it.Offerings {
			if o.Zone == l[v1.LabelZone] && o.CapacityType == l[v1.CapacityTypeLabelKey] && o.ReservationID == l[v1.LabelCapacityReservationID] {
				return o.Price, true
			}
		}
	}
	return 0, false
}
