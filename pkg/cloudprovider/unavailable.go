package cloudprovider

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// DefaultUnavailableOfferingsTTL is how long an offering stays unavailable
// after an insufficient-capacity error (compat.md; it was 45 s in 2022).
const DefaultUnavailableOfferingsTTL = 3 * time.Minute

// OfferingKey names one offering of one instance type. It is comparable,
// so it keys maps. ReservationID is set only for reserved offerings.
type OfferingKey struct {
	CapacityType  string
	InstanceType  string
	Zone          string
	ReservationID string
}

// String is "capacityType/instanceType/zone[/reservationID]".
func (k OfferingKey) String() string {
	s := k.CapacityType + "/" + k.InstanceType + "/" + k.Zone
	if k.ReservationID != "" {
		s += "/" + k.ReservationID
	}
	return s
}

// Key names offering o of the instance type instanceType.
func (o *Offering) Key(instanceType string) OfferingKey {
	return OfferingKey{CapacityType: o.CapacityType, InstanceType: instanceType, Zone: o.Zone, ReservationID: o.ReservationID}
}

// UnavailableOfferings remembers, for a TTL, the offerings that recently
// failed with insufficient capacity, so the next simulation skips them and
// falls back to the next offering at once. Marks expire by the injected
// clock on read: there is no goroutine and no wall clock. It is safe for
// concurrent use.
type UnavailableOfferings struct {
	clk clock.PassiveClock
	ttl time.Duration

	mu            sync.RWMutex
	offerings     map[OfferingKey]mark
	capacityTypes map[string]mark
	// nextExpiry is the earliest expiry among the marks (zero when there
	// are none), so reads skip the scan until something is due.
	nextExpiry time.Time
	seq        uint64
	// until is, per offering and per capacity type, when its latest mark
	// ends (or ended): kept after the mark expires, so returning to
	// preferred capacity can tell how long an offering has been available.
	until             map[OfferingKey]time.Time
	capacityTypeUntil map[string]time.Time
}

type mark struct {
	reason  string
	expires time.Time
}

// NewUnavailableOfferings returns an empty cache whose marks last ttl by
// clk; ttl <= 0 means DefaultUnavailableOfferingsTTL. clk must not be nil.
func NewUnavailableOfferings(clk clock.PassiveClock, ttl time.Duration) *UnavailableOfferings {
	if ttl <= 0 {
		ttl = DefaultUnavailableOfferingsTTL
	}
	return &UnavailableOfferings{
		clk:               clk,
		ttl:               ttl,
		offerings:         map[OfferingKey]mark{},
		capacityTypes:     map[string]mark{},
		until:             map[OfferingKey]time.Time{},
		capacityTypeUntil: map[string]time.Time{},
	}
}

// TTL is how long a mark lasts.
func (u *UnavailableOfferings) TTL() time.Duration { return u.ttl }

// MarkUnavailable marks one offering unavailable for the TTL from now,
// extending an existing mark and replacing its reason.
func (u *UnavailableOfferings) MarkUnavailable(key OfferingKey, reason string) {
	expires := u.clk.Now().Add(u.ttl)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.markOfferingLocked(key, reason, expires)
}

// MarkCapacityTypeUnavailable marks every offering of capacityType
// unavailable account-wide for the TTL (e.g. spot after
// MaxSpotInstanceCountExceeded).
func (u *UnavailableOfferings) MarkCapacityTypeUnavailable(capacityType, reason string) {
	expires := u.clk.Now().Add(u.ttl)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.markCapacityTypeLocked(capacityType, reason, expires)
}

// MarkFromError marks what err found without capacity (UnavailableIn):
// Mark(UnavailableIn(err)).
func (u *UnavailableOfferings) MarkFromError(err error) int {
	return u.Mark(UnavailableIn(err))
}

// Mark marks, under one lock so readers never see half of it, every
// offering ice names and its capacity-type-wide marks. It returns the
// number of marks made: 0 for nil.
func (u *UnavailableOfferings) Mark(ice *InsufficientCapacityError) int {
	if ice == nil {
		return 0
	}
	expires := u.clk.Now().Add(u.ttl)
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, key := range ice.Offerings {
		u.markOfferingLocked(key, ice.Reason(key), expires)
	}
	for _, ct := range ice.CapacityTypeWide {
		u.markCapacityTypeLocked(ct, ice.wideReason(ct), expires)
	}
	return len(ice.Offerings) + len(ice.CapacityTypeWide)
}

func (u *UnavailableOfferings) markOfferingLocked(key OfferingKey, reason string, expires time.Time) {
	u.offerings[key] = mark{reason: reason, expires: expires}
	u.until[key] = expires
	u.markedLocked(expires)
}

func (u *UnavailableOfferings) markCapacityTypeLocked(capacityType, reason string, expires time.Time) {
	u.capacityTypes[capacityType] = mark{reason: reason, expires: expires}
	u.capacityTypeUntil[capacityType] = expires
	u.markedLocked(expires)
}

// History is, for every offering and capacity type ever marked, when its
// latest mark ends or ended: an offering has been available since then
// (if that is past). A copy: the caller may keep it.
func (u *UnavailableOfferings) History() UnavailableHistory {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return UnavailableHistory{Offerings: maps.Clone(u.until), CapacityTypes: maps.Clone(u.capacityTypeUntil)}
}

// UnavailableHistory is UnavailableOfferings.History: until when each
// offering, and each capacity type account-wide, was last unavailable.
type UnavailableHistory struct {
	Offerings     map[OfferingKey]time.Time
	CapacityTypes map[string]time.Time
	// Since, when set, is when the history starts: nothing is known of
	// before it. A controller's cache remembers only its own leadership:
	// the marks of the leader before it are lost with its process.
	Since time.Time
}

// Until is when key was last unavailable until, its own mark's or its
// capacity type's, whichever ends later, and never before Since: an
// offering is known to be available at the earliest since the history
// began (after a controller restart it may have been short a moment
// ago). Zero if it never was and the history has no start.
func (h UnavailableHistory) Until(key OfferingKey) time.Time {
	out := h.Since
	for _, t := range []time.Time{h.Offerings[key], h.CapacityTypes[key.CapacityType]} {
		if t.After(out) {
			out = t
		}
	}
	return out
}

func (u *UnavailableOfferings) markedLocked(expires time.Time) {
	u.seq++
	if u.nextExpiry.IsZero() || expires.Before(u.nextExpiry) {
		u.nextExpiry = expires
	}
}

// IsUnavailable reports whether key, or its whole capacity type, is marked
// and the mark has not expired.
func (u *UnavailableOfferings) IsUnavailable(key OfferingKey) bool {
	_, ok := u.Reason(key)
	return ok
}

// Reason returns why key is unavailable: its own mark's reason, else its
// capacity type's; false when it is available.
func (u *UnavailableOfferings) Reason(key OfferingKey) (string, bool) {
	now := u.clk.Now()
	u.expire(now)
	u.mu.RLock()
	defer u.mu.RUnlock()
	return u.reasonLocked(key, now)
}

func (u *UnavailableOfferings) reasonLocked(key OfferingKey, now time.Time) (string, bool) {
	// Checked by time as well, in case a mark expired since expire ran.
	if m, ok := u.offerings[key]; ok && now.Before(m.expires) {
		return m.reason, true
	}
	if m, ok := u.capacityTypes[key.CapacityType]; ok && now.Before(m.expires) {
		return m.reason, true
	}
	return "", false
}

// Mark is one unavailable offering, or a whole capacity type when
// Offering.InstanceType is empty, and until when.
type Mark struct {
	Offering OfferingKey `json:"offering"`
	Reason   string      `json:"reason"`
	Until    time.Time   `json:"until"`
}

// Marks lists the marks in force, capacity types first, then by offering,
// for explaining why capacity is skipped.
func (u *UnavailableOfferings) Marks() []Mark {
	now := u.clk.Now()
	u.expire(now)
	u.mu.RLock()
	defer u.mu.RUnlock()
	out := make([]Mark, 0, len(u.capacityTypes)+len(u.offerings))
	for ct, m := range u.capacityTypes {
		if now.Before(m.expires) {
			out = append(out, Mark{Offering: OfferingKey{CapacityType: ct}, Reason: m.reason, Until: m.expires})
		}
	}
	for key, m := range u.offerings {
		if now.Before(m.expires) {
			out = append(out, Mark{Offering: key, Reason: m.reason, Until: m.expires})
		}
	}
	slices.SortFunc(out, func(a, b Mark) int {
		return cmp.Or(cmp.Compare(len(a.Offering.InstanceType), 0)-cmp.Compare(len(b.Offering.InstanceType), 0), strings.Compare(a.Offering.String(), b.Offering.String()))
	})
	return out
}

// SeqNum changes whenever the set of unavailable offerings does: on every
// mark and when an expiry is observed. Callers cache filtered instance
// types keyed by it. It observes expiries itself, so a cache keyed by it
// never outlives a mark.
func (u *UnavailableOfferings) SeqNum() uint64 {
	u.expire(u.clk.Now())
	u.mu.RLock()
	defer u.mu.RUnlock()
	return u.seq
}

// Cleanup deletes expired marks (reads already ignore them) and bumps
// SeqNum if there were any.
func (u *UnavailableOfferings) Cleanup() {
	u.expire(u.clk.Now())
}

// expire deletes the marks expired at now, bumping seq once if any were.
// The read-locked check keeps the common case (nothing due) cheap.
func (u *UnavailableOfferings) expire(now time.Time) {
	u.mu.RLock()
	due := !u.nextExpiry.IsZero() && !now.Before(u.nextExpiry)
	u.mu.RUnlock()
	if !due {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	var next time.Time
	expired := false
	for key, m := range u.offerings {
		if !now.Before(m.expires) {
			delete(u.offerings, key)
			expired = true
		} else if next.IsZero() || m.expires.Before(next) {
			next = m.expires
		}
	}
	for ct, m := range u.capacityTypes {
		if !now.Before(m.expires) {
			delete(u.capacityTypes, ct)
			expired = true
		} else if next.IsZero() || m.expires.Before(next) {
			next = m.expires
		}
	}
	u.nextExpiry = next
	if expired {
		u.seq++
	}
}

// Apply returns its with every unavailable offering's Available set to 0.
// Instance types with an unavailable offering are copied (the type and its
// Offerings; unaffected offerings are shared); the others are returned as
// they are. The inputs are never mutated. One clock reading and one lock
// cover the whole list, so the result is consistent.
func (u *UnavailableOfferings) Apply(its []*InstanceType) []*InstanceType {
	now := u.clk.Now()
	u.expire(now)
	u.mu.RLock()
	defer u.mu.RUnlock()
	out := make([]*InstanceType, len(its))
	for i, it := range its {
		out[i] = it
		if len(u.offerings) == 0 && len(u.capacityTypes) == 0 {
			continue
		}
		var offerings Offerings
		for j, o := range it.Offerings {
			if !o.IsAvailable() {
				continue
			}
			if _, unavailable := u.reasonLocked(o.Key(it.Name), now); !unavailable {
				continue
			}
			if offerings == nil {
				offerings = make(Offerings, len(it.Offerings))
				copy(offerings, it.Offerings)
			}
			cp := *o
			cp.Available = 0
			offerings[j] = &cp
		}
		if offerings != nil {
			cp := *it
			cp.Offerings = offerings
			out[i] = &cp
		}
	}
	return out
}
