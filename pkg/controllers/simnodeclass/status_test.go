package simnodeclass

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/test"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// reservations: cr-a and cr-b are active and selected by terms(); cr-c
// is active, open and ends first, but no term selects it; cr-d is
// selected but over; cr-e is selected but starts later.
func reservations() []sim.Reservation {
	return []sim.Reservation{
		{ID: "cr-a", InstanceType: "c4.xlarge", Zone: "us-west-2a", Type: simv1alpha1.ReservationTypeTargeted, OwnerID: "123456789012",
			Total: 4, Used: 1, End: start.Add(10 * time.Minute)},
		{ID: "cr-b", InstanceType: "g5.xlarge", Zone: "us-west-2b", Type: simv1alpha1.ReservationTypeOpen, OwnerID: "123456789012",
			Tags: map[string]string{"team": "ml"}, Total: 2, External: 1, ExternalSeen: 1},
		{ID: "cr-c", InstanceType: "c4.xlarge", Zone: "us-west-2a", Type: simv1alpha1.ReservationTypeOpen, OwnerID: "123456789012",
			Total: 8, End: start.Add(5 * time.Minute)},
		{ID: "cr-d", InstanceType: "c4.xlarge", Zone: "us-west-2a", Type: simv1alpha1.ReservationTypeTargeted, OwnerID: "123456789012",
			Total: 1, End: start.Add(-time.Minute)},
		{ID: "cr-e", InstanceType: "g5.xlarge", Zone: "us-west-2a", Type: simv1alpha1.ReservationTypeOpen, OwnerID: "123456789012",
			Tags: map[string]string{"team": "web"}, Total: 1, Start: start.Add(20 * time.Minute)},
	}
}

func terms() []simv1alpha1.CapacityReservationSelectorTerm {
	return []simv1alpha1.CapacityReservationSelectorTerm{{ID: "cr-a"}, {ID: "cr-d"}, {Tags: map[string]string{"team": "*"}}}
}

func withTerms(ts ...simv1alpha1.CapacityReservationSelectorTerm) func(*simv1alpha1.SimNodeClass) {
	return func(nc *simv1alpha1.SimNodeClass) { nc.Spec.CapacityReservationSelectorTerms = ts }
}

// wantReservations is the status list for reservations() and terms() at
// start: exactly cr-a and cr-b.
func wantReservations() []simv1alpha1.CapacityReservation {
	end := metav1.NewTime(start.Add(10 * time.Minute))
	return []simv1alpha1.CapacityReservation{
		{ID: "cr-a", InstanceType: "c4.xlarge", Zone: "us-west-2a", Type: simv1alpha1.ReservationTypeTargeted, OwnerID: "123456789012",
			AvailableInstanceCount: 3, TotalInstanceCount: 4, EndTime: &end},
		{ID: "cr-b", InstanceType: "g5.xlarge", Zone: "us-west-2b", Type: simv1alpha1.ReservationTypeOpen, OwnerID: "123456789012",
			AvailableInstanceCount: 1, TotalInstanceCount: 2},
	}
}

func TestStepRequeue(t *testing.T) {
	cases := []struct {
		name         string
		terms        []simv1alpha1.CapacityReservationSelectorTerm
		reservations []sim.Reservation
		now          time.Time
		refresh      time.Duration
		want         time.Duration
	}{
		{"the selected reservation's end, not the earlier unselected one's", terms(), reservations(), start, time.Hour, 10 * time.Minute},
		{"refresh when sooner", terms(), reservations(), start, 30 * time.Second, 30 * time.Second},
		{"a selected start after the last end", terms(), reservations(), start.Add(10 * time.Minute), time.Hour, 10 * time.Minute},
		{"nothing left to change", terms(), reservations(), start.Add(20 * time.Minute), time.Hour, time.Hour},
		{"no terms", nil, reservations(), start, time.Hour, time.Hour},
		{"no reservations", terms(), nil, start, time.Hour, time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc := test.SimNodeClass(withTerms(tc.terms...))
			if got := Step(nc, tc.reservations, tc.now, tc.refresh).RequeueAfter; got != tc.want {
				t.Errorf("RequeueAfter %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStepStatus(t *testing.T) {
	nc := test.SimNodeClass(withTerms(terms()...), func(nc *simv1alpha1.SimNodeClass) { nc.Generation = 2 })
	first := Step(nc, reservations(), start, time.Minute)
	if diff := cmp.Diff(wantReservations(), first.Status.CapacityReservations); diff != "" {
		t.Errorf("reservations (-want +got):\n%s", diff)
	}
	want := []metav1.Condition{{
		Type: simv1alpha1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: sim.ReasonReady,
		ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(start),
	}}
	if diff := cmp.Diff(want, first.Status.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if len(nc.Status.CapacityReservations) != 0 || len(nc.Status.Conditions) != 0 {
		t.Errorf("Step modified its input: %+v", nc.Status)
	}

	// Later, at generation 3 with cr-a over and no term matching
	// anything active: Ready stays True (still the first transition
	// time), with a message, and the list empties.
	nc.Status = first.Status
	nc.Generation = 3
	nc.Spec.CapacityReservationSelectorTerms = terms()[:2]
	later := Step(nc, reservations(), start.Add(15*time.Minute), time.Minute)
	if len(later.Status.CapacityReservations) != 0 {
		t.Errorf("reservations %+v, want none", later.Status.CapacityReservations)
	}
	want[0].ObservedGeneration = 3
	want[0].Message = "no active capacity reservation matches capacityReservationSelectorTerms"
	if diff := cmp.Diff(want, later.Status.Conditions); diff != "" {
		t.Errorf("later conditions (-want +got):\n%s", diff)
	}

	// An invalid spot max price (possible only without an API server)
	// flips Ready, with a new transition time.
	nc.Status = later.Status
	nc.Spec.SpotMaxPrice = ptr.To("cheap")
	bad := Step(nc, reservations(), start.Add(time.Hour), time.Minute)
	ready := bad.Status.Conditions[0]
	if ready.Status != metav1.ConditionFalse || ready.Reason != sim.ReasonInvalidSpotMaxPrice || !ready.LastTransitionTime.Equal(&metav1.Time{Time: start.Add(time.Hour)}) {
		t.Errorf("ready %+v, want False/%s at start+1h", ready, sim.ReasonInvalidSpotMaxPrice)
	}
}

func TestSelected(t *testing.T) {
	var got []string
	for _, r := range Selected(simv1alpha1.SimNodeClassSpec{CapacityReservationSelectorTerms: terms()}, reservations()) {
		got = append(got, r.ID)
	}
	if diff := cmp.Diff([]string{"cr-a", "cr-b", "cr-d", "cr-e"}, got); diff != "" {
		t.Errorf("selected (-want +got):\n%s", diff)
	}
	if s := Selected(simv1alpha1.SimNodeClassSpec{}, reservations()); len(s) != 0 {
		t.Errorf("no terms selected %+v", s)
	}
}
