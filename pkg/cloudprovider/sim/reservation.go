package sim

import (
	"context"
	"maps"
	"slices"
	"time"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// DefaultReservationRefreshInterval is how often the account re-reads how
// much of its reservations other accounts use, when the profile does not
// say: real providers poll their reservations (Karpenter's AWS provider
// describes them periodically) and learn of other accounts' use no sooner.
const DefaultReservationRefreshInterval = time.Minute

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
	// ExternalSeen is External as the account last observed it: at the
	// last periodic refresh, or at a launch into the reservation that
	// failed for want of capacity.
	ExternalSeen int `json:"externalSeen"`
	// Start and End bound when the reservation accepts launches; zero
	// means unbounded.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// CapacityBlock: instances are reclaimed at End. Ended: End has
	// passed and the instances in the reservation were released (or
	// reclaimed).
	CapacityBlock bool `json:"capacityBlock,omitempty"`
	Ended         bool `json:"ended,omitempty"`
	// Interruptible: its owner may reclaim the reservation's capacity
	// (an AWS interruptible capacity reservation).
	Interruptible bool `json:"interruptible,omitempty"`
}

// Kind is what a reserved offering of the reservation says of it: its
// type (v1.ReservationTypeCapacityBlock or v1.ReservationTypeDefault)
// and whether it is interruptible.
func (r Reservation) Kind() (string, bool) {
	if r.CapacityBlock {
		return v1.ReservationTypeCapacityBlock, r.Interruptible
	}
	return v1.ReservationTypeDefault, r.Interruptible
}

// Available is how many more instances can launch into the reservation.
func (r Reservation) Available() int {
	return max(0, r.Total-r.Used-r.External)
}

// Advertised is how many free slots the account believes the reservation
// has: its own launches count at once, other accounts' use only as last
// observed. It is never below Available, so the cloud may refuse a launch
// it advertised room for, but never over-books.
func (r Reservation) Advertised() int {
	return max(0, r.Total-r.Used-r.ExternalSeen)
}

// observe brings the account's view of other accounts' use up to date and
// reports whether it changed.
func (r *Reservation) observe() bool {
	changed := r.ExternalSeen != r.External
	r.ExternalSeen = r.External
	return changed
}

// Active reports whether the reservation accepts launches at now. A
// capacity block stops ScheduledChangeNotice before its end, when its
// instances are told they will be reclaimed: a launch then would only be
// interrupted at once.
func (r Reservation) Active(now time.Time) bool {
	if !r.Start.IsZero() && now.Before(r.Start) {
		return false
	}
	end := r.End
	if r.CapacityBlock && !end.IsZero() {
		end = end.Add(-ScheduledChangeNotice)
	}
	return end.IsZero() || now.Before(end)
}

// lastRefresh is the latest periodic reservation refresh at or before now;
// refreshes happen every interval from the cloud's start.
func lastRefresh(start, now time.Time, every time.Duration) time.Time {
	return start.Add(now.Sub(start) / every * every)
}

// CapacityBlocks implements cloudprovider.CapacityBlockSource: the
// capacity blocks that have not ended, reclaimed at their end (the sim
// announces it ScheduledChangeNotice ahead and terminates their
// instances then).
func (c *Cloud) CapacityBlocks(ctx context.Context) ([]cloudprovider.CapacityBlock, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	release, err := c.syncLocked(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	var out []cloudprovider.CapacityBlock
	for _, id := range slices.Sorted(maps.Keys(c.state.Reservations)) {
		if r := c.state.Reservations[id]; r.CapacityBlock && !r.End.IsZero() && !r.Ended {
			out = append(out, cloudprovider.CapacityBlock{ID: id, Reclaim: r.End})
		}
	}
	return out, nil
}
