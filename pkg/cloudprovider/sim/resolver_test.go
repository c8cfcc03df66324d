package sim_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// resolverNow is the fixed "now" of these tests; a func, not a var, so no
// package-level state is shared with other test files.
func resolverNow() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

const (
	ownAccount   = "111122223333"
	otherAccount = "444455556666"
)

func resolverReservation(id string, mut ...func(*sim.Reservation)) sim.Reservation {
	r := sim.Reservation{
		ID: id, InstanceType: "m5.large", Zone: "test-zone-a", Type: simv1alpha1.ReservationTypeTargeted,
		OwnerID: ownAccount, Tags: map[string]string{"team": "ml", "env": "prod"}, Total: 4,
	}
	for _, m := range mut {
		m(&r)
	}
	return r
}

func resolverEntry(r sim.Reservation) simv1alpha1.CapacityReservation {
	cr := simv1alpha1.CapacityReservation{
		ID: r.ID, InstanceType: r.InstanceType, Zone: r.Zone, Type: r.Type, OwnerID: r.OwnerID,
		AvailableInstanceCount: r.Advertised(), TotalInstanceCount: r.Total,
	}
	if !r.End.IsZero() {
		cr.EndTime = ptr.To(metav1.NewTime(r.End))
	}
	return cr
}

type selectorTerm = simv1alpha1.CapacityReservationSelectorTerm

func TestSelects(t *testing.T) {
	r := resolverReservation("cr-1")
	for _, tc := range []struct {
		name string
		term selectorTerm
		want bool
	}{
		{"id matches", selectorTerm{ID: "cr-1"}, true},
		{"id differs", selectorTerm{ID: "cr-2"}, false},
		{"instance type matches", selectorTerm{InstanceType: "m5.large"}, true},
		{"instance type differs", selectorTerm{InstanceType: "m5.xlarge"}, false},
		{"owner matches", selectorTerm{OwnerID: ownAccount}, true},
		{"owner differs", selectorTerm{OwnerID: otherAccount}, false},
		{"type matches", selectorTerm{Type: simv1alpha1.ReservationTypeTargeted}, true},
		{"type differs", selectorTerm{Type: simv1alpha1.ReservationTypeOpen}, false},
		{"tag matches", selectorTerm{Tags: map[string]string{"team": "ml"}}, true},
		{"all tags match", selectorTerm{Tags: map[string]string{"team": "ml", "env": "prod"}}, true},
		{"tag value differs", selectorTerm{Tags: map[string]string{"team": "web"}}, false},
		{"one of two tags differs", selectorTerm{Tags: map[string]string{"team": "ml", "env": "dev"}}, false},
		{"wildcard matches any value", selectorTerm{Tags: map[string]string{"env": "*"}}, true},
		{"wildcard still needs the key", selectorTerm{Tags: map[string]string{"cost-center": "*"}}, false},
		{"missing tag key", selectorTerm{Tags: map[string]string{"cost-center": "42"}}, false},
		{"tag values are case sensitive", selectorTerm{Tags: map[string]string{"team": "ML"}}, false},
		{"every set field must match", selectorTerm{InstanceType: "m5.large", OwnerID: ownAccount, Type: simv1alpha1.ReservationTypeTargeted, Tags: map[string]string{"team": "*"}}, true},
		{"one set field differs", selectorTerm{InstanceType: "m5.large", OwnerID: otherAccount}, false},
		{"empty term selects nothing", selectorTerm{}, false},
		{"empty tag map selects nothing", selectorTerm{Tags: map[string]string{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sim.Selects(tc.term, r); got != tc.want {
				t.Errorf("Selects(%+v) = %t, want %t", tc.term, got, tc.want)
			}
		})
	}
	if sim.Selects(selectorTerm{Tags: map[string]string{"team": "*"}}, resolverReservation("cr-1", func(r *sim.Reservation) { r.Tags = nil })) {
		t.Error("a tag term selected a reservation without tags")
	}
}

func TestResolveNodeClassReservations(t *testing.T) {
	t0 := resolverNow()
	open := resolverReservation("cr-open", func(r *sim.Reservation) { r.Type = simv1alpha1.ReservationTypeOpen })
	targeted := resolverReservation("cr-targeted")
	gpu := resolverReservation("cr-gpu", func(r *sim.Reservation) {
		r.InstanceType = "p4d.24xlarge"
		r.Tags = map[string]string{"team": "research"}
	})
	expired := resolverReservation("cr-expired", func(r *sim.Reservation) { r.End = t0.Add(-time.Minute) })
	endsNow := resolverReservation("cr-ends-now", func(r *sim.Reservation) { r.End = t0 })
	future := resolverReservation("cr-future", func(r *sim.Reservation) { r.Start = t0.Add(time.Hour) })
	startsNow := resolverReservation("cr-starts-now", func(r *sim.Reservation) { r.Start = t0 })
	window := resolverReservation("cr-window", func(r *sim.Reservation) { r.Start = t0.Add(-time.Hour); r.End = t0.Add(time.Hour) })
	busy := resolverReservation("cr-busy", func(r *sim.Reservation) { r.Total = 10; r.Used = 3; r.External = 2; r.ExternalSeen = 2 })
	full := resolverReservation("cr-full", func(r *sim.Reservation) { r.Total = 2; r.Used = 1; r.External = 5; r.ExternalSeen = 5 })
	stale := resolverReservation("cr-stale", func(r *sim.Reservation) { r.Total = 3; r.Used = 1; r.External = 2 })

	for _, tc := range []struct {
		name         string
		terms        []selectorTerm
		reservations []sim.Reservation
		want         []simv1alpha1.CapacityReservation
	}{
		{"no terms selects nothing, not even open", nil, []sim.Reservation{open, targeted}, nil},
		{"open reservation no term selects is absent", []selectorTerm{{ID: "cr-targeted"}}, []sim.Reservation{open, targeted},
			[]simv1alpha1.CapacityReservation{resolverEntry(targeted)}},
		{"open reservation selected by type", []selectorTerm{{Type: simv1alpha1.ReservationTypeOpen}}, []sim.Reservation{open, targeted},
			[]simv1alpha1.CapacityReservation{resolverEntry(open)}},
		{"terms are ORed", []selectorTerm{{ID: "cr-open"}, {InstanceType: "p4d.24xlarge"}}, []sim.Reservation{open, targeted, gpu},
			[]simv1alpha1.CapacityReservation{resolverEntry(gpu), resolverEntry(open)}},
		{"several terms selecting one reservation list it once",
			[]selectorTerm{{ID: "cr-targeted"}, {Tags: map[string]string{"team": "ml"}}, {OwnerID: ownAccount}},
			[]sim.Reservation{targeted},
			[]simv1alpha1.CapacityReservation{resolverEntry(targeted)}},
		{"sorted by id whatever the input order", []selectorTerm{{OwnerID: ownAccount}}, []sim.Reservation{targeted, open, gpu},
			[]simv1alpha1.CapacityReservation{resolverEntry(gpu), resolverEntry(open), resolverEntry(targeted)}},
		{"expired and not yet started are left out", []selectorTerm{{OwnerID: ownAccount}},
			[]sim.Reservation{expired, endsNow, future, startsNow, window},
			[]simv1alpha1.CapacityReservation{resolverEntry(startsNow), resolverEntry(window)}},
		{"available subtracts used and external, never below zero", []selectorTerm{{OwnerID: ownAccount}}, []sim.Reservation{busy, full},
			[]simv1alpha1.CapacityReservation{
				{ID: "cr-busy", InstanceType: "m5.large", Zone: "test-zone-a", Type: simv1alpha1.ReservationTypeTargeted, OwnerID: ownAccount, AvailableInstanceCount: 5, TotalInstanceCount: 10},
				{ID: "cr-full", InstanceType: "m5.large", Zone: "test-zone-a", Type: simv1alpha1.ReservationTypeTargeted, OwnerID: ownAccount, AvailableInstanceCount: 0, TotalInstanceCount: 2},
			}},
		{"external use shows only once observed", []selectorTerm{{ID: "cr-stale"}}, []sim.Reservation{stale},
			[]simv1alpha1.CapacityReservation{
				{ID: "cr-stale", InstanceType: "m5.large", Zone: "test-zone-a", Type: simv1alpha1.ReservationTypeTargeted, OwnerID: ownAccount, AvailableInstanceCount: 2, TotalInstanceCount: 3},
			}},
		{"end time is reported", []selectorTerm{{ID: "cr-window"}}, []sim.Reservation{window},
			[]simv1alpha1.CapacityReservation{{
				ID: "cr-window", InstanceType: "m5.large", Zone: "test-zone-a", Type: simv1alpha1.ReservationTypeTargeted, OwnerID: ownAccount,
				AvailableInstanceCount: 4, TotalInstanceCount: 4, EndTime: ptr.To(metav1.NewTime(t0.Add(time.Hour))),
			}}},
		{"same zone and type stay separate entries", []selectorTerm{{InstanceType: "m5.large"}},
			[]sim.Reservation{targeted, resolverReservation("cr-twin")},
			[]simv1alpha1.CapacityReservation{resolverEntry(resolverReservation("cr-targeted")), resolverEntry(resolverReservation("cr-twin"))}},
		{"a repeated id keeps the first", []selectorTerm{{OwnerID: ownAccount}},
			[]sim.Reservation{busy, resolverReservation("cr-busy")},
			[]simv1alpha1.CapacityReservation{resolverEntry(busy)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := simv1alpha1.SimNodeClassSpec{CapacityReservationSelectorTerms: tc.terms}
			got := sim.ResolveNodeClass(spec, tc.reservations, t0)
			if diff := cmp.Diff(tc.want, got.CapacityReservations); diff != "" {
				t.Errorf("CapacityReservations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveNodeClassConditions(t *testing.T) {
	t0 := resolverNow()
	ready := func(status metav1.ConditionStatus, reason, message string) []metav1.Condition {
		return []metav1.Condition{{
			Type: simv1alpha1.ConditionTypeReady, Status: status, Reason: reason, Message: message,
			LastTransitionTime: metav1.NewTime(t0),
		}}
	}
	const noMatch = "no active capacity reservation matches capacityReservationSelectorTerms"
	badPrice := func(s string) string {
		return `spotMaxPrice "` + s + `" is not a decimal number of dollars such as 0.42`
	}
	reservations := []sim.Reservation{resolverReservation("cr-1")}
	for _, tc := range []struct {
		name  string
		spec  simv1alpha1.SimNodeClassSpec
		wants []metav1.Condition
	}{
		{"empty spec is ready", simv1alpha1.SimNodeClassSpec{}, ready(metav1.ConditionTrue, sim.ReasonReady, "")},
		{"selected reservation is ready", simv1alpha1.SimNodeClassSpec{CapacityReservationSelectorTerms: []selectorTerm{{ID: "cr-1"}}},
			ready(metav1.ConditionTrue, sim.ReasonReady, "")},
		{"terms matching nothing are still ready, with a message",
			simv1alpha1.SimNodeClassSpec{CapacityReservationSelectorTerms: []selectorTerm{{ID: "cr-2"}}},
			ready(metav1.ConditionTrue, sim.ReasonReady, noMatch)},
		{"integer price", simv1alpha1.SimNodeClassSpec{SpotMaxPrice: ptr.To("1")}, ready(metav1.ConditionTrue, sim.ReasonReady, "")},
		{"decimal price", simv1alpha1.SimNodeClassSpec{SpotMaxPrice: ptr.To("0.0634")}, ready(metav1.ConditionTrue, sim.ReasonReady, "")},
		{"dollar sign", simv1alpha1.SimNodeClassSpec{SpotMaxPrice: ptr.To("$0.40")},
			ready(metav1.ConditionFalse, sim.ReasonInvalidSpotMaxPrice, badPrice("$0.40"))},
		{"negative (azure -1 is not accepted)", simv1alpha1.SimNodeClassSpec{SpotMaxPrice: ptr.To("-1")},
			ready(metav1.ConditionFalse, sim.ReasonInvalidSpotMaxPrice, badPrice("-1"))},
		{"empty", simv1alpha1.SimNodeClassSpec{SpotMaxPrice: ptr.To("")},
			ready(metav1.ConditionFalse, sim.ReasonInvalidSpotMaxPrice, badPrice(""))},
		{"trailing dot", simv1alpha1.SimNodeClassSpec{SpotMaxPrice: ptr.To("1.")},
			ready(metav1.ConditionFalse, sim.ReasonInvalidSpotMaxPrice, badPrice("1."))},
		{"leading dot", simv1alpha1.SimNodeClassSpec{SpotMaxPrice: ptr.To(".5")},
			ready(metav1.ConditionFalse, sim.ReasonInvalidSpotMaxPrice, badPrice(".5"))},
		{"two dots", simv1alpha1.SimNodeClassSpec{SpotMaxPrice: ptr.To("1.2.3")},
			ready(metav1.ConditionFalse, sim.ReasonInvalidSpotMaxPrice, badPrice("1.2.3"))},
		{"exponent", simv1alpha1.SimNodeClassSpec{SpotMaxPrice: ptr.To("1e3")},
			ready(metav1.ConditionFalse, sim.ReasonInvalidSpotMaxPrice, badPrice("1e3"))},
		{"bad price and no match report both",
			simv1alpha1.SimNodeClassSpec{SpotMaxPrice: ptr.To("NaN"), CapacityReservationSelectorTerms: []selectorTerm{{ID: "cr-2"}}},
			ready(metav1.ConditionFalse, sim.ReasonInvalidSpotMaxPrice, badPrice("NaN")+"; "+noMatch)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sim.ResolveNodeClass(tc.spec, reservations, t0)
			if diff := cmp.Diff(tc.wants, got.Conditions); diff != "" {
				t.Errorf("Conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNextReservationChange(t *testing.T) {
	t0 := resolverNow()
	at := t0.Add
	for _, tc := range []struct {
		name         string
		reservations []sim.Reservation
		want         time.Time
		wantOK       bool
	}{
		{"no reservations", nil, time.Time{}, false},
		{"unbounded reservations never change", []sim.Reservation{resolverReservation("cr-1")}, time.Time{}, false},
		{"all bounds past", []sim.Reservation{
			resolverReservation("cr-1", func(r *sim.Reservation) { r.Start = at(-2 * time.Hour); r.End = at(-time.Hour) }),
		}, time.Time{}, false},
		{"bounds equal to now are already applied", []sim.Reservation{
			resolverReservation("cr-1", func(r *sim.Reservation) { r.Start = t0 }),
			resolverReservation("cr-2", func(r *sim.Reservation) { r.End = t0 }),
		}, time.Time{}, false},
		{"future start", []sim.Reservation{
			resolverReservation("cr-1", func(r *sim.Reservation) { r.Start = at(time.Hour) }),
		}, at(time.Hour), true},
		{"future end of an active reservation", []sim.Reservation{
			resolverReservation("cr-1", func(r *sim.Reservation) { r.Start = at(-time.Hour); r.End = at(30 * time.Minute) }),
		}, at(30 * time.Minute), true},
		{"start before end of the same reservation", []sim.Reservation{
			resolverReservation("cr-1", func(r *sim.Reservation) { r.Start = at(time.Hour); r.End = at(2 * time.Hour) }),
		}, at(time.Hour), true},
		{"earliest across reservations, whatever the order", []sim.Reservation{
			resolverReservation("cr-1", func(r *sim.Reservation) { r.End = at(3 * time.Hour) }),
			resolverReservation("cr-2", func(r *sim.Reservation) { r.Start = at(-time.Hour); r.End = at(time.Minute) }),
			resolverReservation("cr-3", func(r *sim.Reservation) { r.Start = at(2 * time.Hour) }),
		}, at(time.Minute), true},
		{"one nanosecond ahead counts", []sim.Reservation{
			resolverReservation("cr-1", func(r *sim.Reservation) { r.End = at(time.Nanosecond) }),
		}, at(time.Nanosecond), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := sim.NextReservationChange(tc.reservations, t0)
			if ok != tc.wantOK || !got.Equal(tc.want) {
				t.Errorf("NextReservationChange = %v, %t; want %v, %t", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// The returned requeue time must be a moment at which the status actually
// changes, and none may come earlier.
func TestNextReservationChangeMatchesStatusChange(t *testing.T) {
	t0 := resolverNow()
	spec := simv1alpha1.SimNodeClassSpec{CapacityReservationSelectorTerms: []selectorTerm{{OwnerID: ownAccount}}}
	reservations := []sim.Reservation{
		resolverReservation("cr-1", func(r *sim.Reservation) { r.Start = t0.Add(90 * time.Minute) }),
		resolverReservation("cr-2", func(r *sim.Reservation) { r.End = t0.Add(45 * time.Minute) }),
	}
	next, ok := sim.NextReservationChange(reservations, t0)
	if !ok {
		t.Fatal("no next change")
	}
	before := sim.ResolveNodeClass(spec, reservations, t0).CapacityReservations
	if diff := cmp.Diff(before, sim.ResolveNodeClass(spec, reservations, next.Add(-time.Nanosecond)).CapacityReservations); diff != "" {
		t.Errorf("status changed before %v (-at now +just before):\n%s", next, diff)
	}
	if cmp.Equal(before, sim.ResolveNodeClass(spec, reservations, next).CapacityReservations) {
		t.Errorf("status did not change at %v", next)
	}
}

func TestResolveNodeClassDoesNotMutateInputs(t *testing.T) {
	t0 := resolverNow()
	spec := simv1alpha1.SimNodeClassSpec{
		CapacityReservationSelectorTerms: []selectorTerm{{Tags: map[string]string{"team": "*"}}, {ID: "cr-a"}},
		SpotMaxPrice:                     ptr.To("bad"),
		Tags:                             map[string]string{"k": "v"},
	}
	reservations := []sim.Reservation{
		resolverReservation("cr-c", func(r *sim.Reservation) { r.End = t0.Add(time.Hour) }),
		resolverReservation("cr-a"),
		resolverReservation("cr-b", func(r *sim.Reservation) { r.Used = 9 }),
	}
	specCopy := *spec.DeepCopy()
	resCopy := make([]sim.Reservation, len(reservations))
	for i, r := range reservations {
		resCopy[i] = r
		resCopy[i].Tags = map[string]string{}
		for k, v := range r.Tags {
			resCopy[i].Tags[k] = v
		}
	}

	status := sim.ResolveNodeClass(spec, reservations, t0)
	sim.NextReservationChange(reservations, t0)
	for _, r := range reservations {
		for _, term := range spec.CapacityReservationSelectorTerms {
			sim.Selects(term, r)
		}
	}

	if diff := cmp.Diff(specCopy, spec); diff != "" {
		t.Errorf("spec mutated (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(resCopy, reservations); diff != "" {
		t.Errorf("reservations mutated (-before +after):\n%s", diff)
	}
	// The returned EndTime must not alias anything the caller holds.
	status.CapacityReservations[2].EndTime.Time = time.Time{}
	if !reservations[0].End.Equal(t0.Add(time.Hour)) {
		t.Error("status EndTime aliases the reservation")
	}
}
