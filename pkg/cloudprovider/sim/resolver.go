package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
)

// Ready condition reasons set by ResolveNodeClass.
const (
	ReasonReady               = "Ready"
	ReasonInvalidSpotMaxPrice = "InvalidSpotMaxPrice"
)

// ResolveNodeClass computes a SimNodeClass status from its spec and the
// reservations the account can see (owned or shared with it, so no owner
// check is needed beyond the terms' own ownerID). Free slots are the
// advertised ones (Reservation.Advertised): other accounts' use as last
// observed.
//
// CapacityReservations lists, sorted by id, each reservation that is active
// at now and that at least one term selects; unselected reservations are
// left out even when open (decision 1), and each reservation is its own
// entry (decision 2). No terms means no reservations.
//
// Conditions holds one Ready condition with LastTransitionTime = now and
// ObservedGeneration 0: the resolver never sees the object, so the caller
// sets ObservedGeneration and keeps the old LastTransitionTime when the
// status did not change (meta.SetStatusCondition does both).
//
// The function is pure: it reads no clock and mutates none of its inputs.
func ResolveNodeClass(spec simv1alpha1.SimNodeClassSpec, reservations []Reservation, now time.Time) simv1alpha1.SimNodeClassStatus {
	var status simv1alpha1.SimNodeClassStatus
	for _, r := range reservations {
		if !r.Active(now) || !selectedByAny(spec.CapacityReservationSelectorTerms, r) {
			continue
		}
		status.CapacityReservations = append(status.CapacityReservations, capacityReservation(r))
	}
	// Stable, so that for a (cloud-side impossible) repeated id the first
	// one in the input is the one kept.
	slices.SortStableFunc(status.CapacityReservations, func(a, b simv1alpha1.CapacityReservation) int {
		return cmp.Compare(a.ID, b.ID)
	})
	status.CapacityReservations = slices.CompactFunc(status.CapacityReservations, func(a, b simv1alpha1.CapacityReservation) bool {
		return a.ID == b.ID
	})

	ready := metav1.Condition{
		Type:               simv1alpha1.ConditionTypeReady,
		Status:             metav1.ConditionTrue,
		Reason:             ReasonReady,
		LastTransitionTime: metav1.NewTime(now),
	}
	var messages []string
	if spec.SpotMaxPrice != nil && !isDecimal(*spec.SpotMaxPrice) {
		// The CRD pattern rejects this, but `capstan simulate` reads
		// manifests without an API server, so check again here.
		ready.Status = metav1.ConditionFalse
		ready.Reason = ReasonInvalidSpotMaxPrice
		messages = append(messages, fmt.Sprintf("spotMaxPrice %q is not a decimal number of dollars such as 0.42", *spec.SpotMaxPrice))
	}
	if len(spec.CapacityReservationSelectorTerms) > 0 && len(status.CapacityReservations) == 0 {
		// Still Ready: a matching reservation may start or be created later,
		// and launches fall back to spot or on-demand meanwhile.
		messages = append(messages, "no active capacity reservation matches capacityReservationSelectorTerms")
	}
	ready.Message = strings.Join(messages, "; ")
	status.Conditions = []metav1.Condition{ready}
	return status
}

// Selects reports whether term selects r: every field the term sets must
// match. A tag value of "*" matches any value, but the key must be present.
// A term that sets nothing selects nothing: the API rejects such a term, and
// matching everything would opt into every open reservation, against
// decision 1.
func Selects(term simv1alpha1.CapacityReservationSelectorTerm, r Reservation) bool {
	if term.ID == "" && term.InstanceType == "" && term.OwnerID == "" && term.Type == "" && len(term.Tags) == 0 {
		return false
	}
	if term.ID != "" && term.ID != r.ID {
		return false
	}
	if term.InstanceType != "" && term.InstanceType != r.InstanceType {
		return false
	}
	if term.OwnerID != "" && term.OwnerID != r.OwnerID {
		return false
	}
	if term.Type != "" && term.Type != r.Type {
		return false
	}
	for k, want := range term.Tags {
		got, ok := r.Tags[k]
		if !ok || (want != "*" && want != got) {
			return false
		}
	}
	return true
}

// NextReservationChange returns the earliest Start or End strictly after
// now among the given reservations, and false when there is none. It looks
// at every reservation passed, selected or not, so it needs no spec; a
// caller wanting fewer wake-ups may pass only the selected ones. A spurious
// wake-up merely recomputes the same status, while a missed one leaves the
// status stale until the next event.
func NextReservationChange(reservations []Reservation, now time.Time) (time.Time, bool) {
	var next time.Time
	for _, r := range reservations {
		for _, t := range []time.Time{r.Start, r.End} {
			// A bound equal to now already shows in the status: Active
			// treats Start as inclusive and End as exclusive.
			if t.After(now) && (next.IsZero() || t.Before(next)) {
				next = t
			}
		}
	}
	return next, !next.IsZero()
}

func selectedByAny(terms []simv1alpha1.CapacityReservationSelectorTerm, r Reservation) bool {
	return slices.ContainsFunc(terms, func(t simv1alpha1.CapacityReservationSelectorTerm) bool {
		return Selects(t, r)
	})
}

// capacityReservation is r's status entry. Its free slots are what the
// account knows, not the truth: like a real provider's status it reports
// the last look at the reservation, and it matches what the planner is
// offered.
func capacityReservation(r Reservation) simv1alpha1.CapacityReservation {
	cr := simv1alpha1.CapacityReservation{
		ID:                     r.ID,
		InstanceType:           r.InstanceType,
		Zone:                   r.Zone,
		Type:                   r.Type,
		OwnerID:                r.OwnerID,
		AvailableInstanceCount: r.Advertised(),
		TotalInstanceCount:     r.Total,
	}
	if !r.End.IsZero() {
		end := metav1.NewTime(r.End)
		cr.EndTime = &end
	}
	return cr
}

// isDecimal mirrors the CRD pattern ^[0-9]+(\.[0-9]+)?$ without a
// package-level compiled regexp.
func isDecimal(s string) bool {
	whole, frac, hasDot := strings.Cut(s, ".")
	return allDigits(whole) && (!hasDot || allDigits(frac))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
