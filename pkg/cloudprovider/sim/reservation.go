package sim

import (
	"time"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
)

// Reservation is a capacity reservation as the simulated cloud holds it.
type Reservation struct {
	ID           string                      `json:"id"`
	InstanceType string                      `json:"instanceType"`
	Zone         string                      `json:"zone"`
	Type         simv1alpha1.ReservationType `json:"type"`
	OwnerID      string                      `json:"ownerID"`
	Tags         map[string]string           `json:"tags,omitempty"`
	// Total is the reservation's size; Used counts instances launched into
	// it by this account; External counts slots another account took.
	Total    int `json:"total"`
	Used     int `json:"used"`
	External int `json:"external"`
	// Start and End bound when the reservation accepts launches; zero
	// means unbounded.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
}

// Available is how many more instances can launch into the reservation.
func (r Reservation) Available() int {
	return max(0, r.Total-r.Used-r.External)
}

// Active reports whether the reservation accepts launches at now.
func (r Reservation) Active(now time.Time) bool {
	if !r.Start.IsZero() && now.Before(r.Start) {
		return false
	}
	return r.End.IsZero() || now.Before(r.End)
}
