package ec2nodeclass

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

func TestResolveCapacityReservations(t *testing.T) {
	ending := func(r ec2types.CapacityReservation, end time.Time) ec2types.CapacityReservation {
		r.EndDate = aws.Time(end)
		return r
	}
	block := func(r ec2types.CapacityReservation) ec2types.CapacityReservation {
		r.ReservationType = ec2types.CapacityReservationTypeCapacityBlock
		return r
	}
	withState := func(r ec2types.CapacityReservation, s ec2types.CapacityReservationState) ec2types.CapacityReservation {
		r.State = s
		return r
	}
	open, targeted := ec2types.InstanceMatchCriteriaOpen, ec2types.InstanceMatchCriteriaTargeted
	interruptible := reservation("cr-int", ownerB, targeted)
	interruptible.Interruptible = aws.Bool(true)
	oddMatch := reservation("cr-odd", ownerA, "future-criteria")
	oddType := reservation("cr-odd-type", ownerA, open)
	oddType.ReservationType = "future-type"

	found := []ec2types.CapacityReservation{
		reservation("cr-b", ownerA, open),
		ending(reservation("cr-a", ownerA, targeted), start.Add(time.Hour)),
		ending(reservation("cr-ended", ownerA, open), start),
		ending(reservation("cr-ending", ownerA, open), start.Add(time.Nanosecond)),
		withState(reservation("cr-cancelled", ownerA, open), ec2types.CapacityReservationStateCancelled),
		withState(reservation("cr-expired", ownerA, open), ec2types.CapacityReservationStateExpired),
		withState(reservation("cr-pending", ownerA, open), ec2types.CapacityReservationStatePending),
		block(ending(reservation("cr-block", ownerA, targeted), start.Add(CapacityBlockExpiringPeriod+time.Second))),
		block(ending(reservation("cr-block-late", ownerA, targeted), start.Add(CapacityBlockExpiringPeriod))),
		interruptible,
		oddMatch,
		oddType,
		reservation("cr-b", ownerA, open),
	}
	got, cond := resolveCapacityReservations([]awsv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "*"}}}, found, start)
	entry := func(id, owner string, imc awsv1.InstanceMatchCriteria, rt awsv1.CapacityReservationType, state awsv1.CapacityReservationState, end *time.Time) awsv1.CapacityReservation {
		cr := awsv1.CapacityReservation{AvailabilityZone: "us-west-2a", ID: id, InstanceMatchCriteria: imc, InstanceType: "m5.large",
			OwnerID: owner, ReservationType: rt, State: state}
		if end != nil {
			cr.EndTime = &metav1.Time{Time: *end}
		}
		return cr
	}
	def, cb := awsv1.CapacityReservationTypeDefault, awsv1.CapacityReservationTypeCapacityBlock
	active, expiring := awsv1.CapacityReservationStateActive, awsv1.CapacityReservationStateExpiring
	tgt, opn := awsv1.InstanceMatchCriteriaTargeted, awsv1.InstanceMatchCriteriaOpen
	want := []awsv1.CapacityReservation{
		entry("cr-a", ownerA, tgt, def, active, aws.Time(start.Add(time.Hour))),
		entry("cr-b", ownerA, opn, def, active, nil),
		entry("cr-block", ownerA, tgt, cb, active, aws.Time(start.Add(CapacityBlockExpiringPeriod+time.Second))),
		entry("cr-block-late", ownerA, tgt, cb, expiring, aws.Time(start.Add(CapacityBlockExpiringPeriod))),
		entry("cr-ending", ownerA, opn, def, active, aws.Time(start.Add(time.Nanosecond))),
	}
	intEntry := entry("cr-int", ownerB, tgt, def, active, nil)
	intEntry.Interruptible = true
	want = append(want, intEntry)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reservations (-want +got):\n%s", diff)
	}
	wantCond := metav1.Condition{Type: awsv1.ConditionTypeCapacityReservationsReady, Status: metav1.ConditionTrue, Reason: awsv1.ConditionTypeCapacityReservationsReady,
		Message: `left out: cr-odd (instance match criteria "future-criteria" is unknown to Capstan), cr-odd-type (reservation type "future-type" is unknown to Capstan)`}
	if diff := cmp.Diff(wantCond, cond); diff != "" {
		t.Errorf("condition (-want +got):\n%s", diff)
	}
}

func TestResolveCapacityReservationsNoneFound(t *testing.T) {
	cases := []struct {
		name    string
		terms   []awsv1.CapacityReservationSelectorTerm
		message string
	}{
		{"no terms, nothing to say", nil, ""},
		{"terms matching nothing active: still True, with a message", []awsv1.CapacityReservationSelectorTerm{{ID: "cr-1"}},
			`no active capacity reservation matches capacityReservationSelectorTerms [{"id":"cr-1"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ended := reservation("cr-1", ownerA, ec2types.InstanceMatchCriteriaOpen)
			ended.EndDate = aws.Time(start.Add(-time.Hour))
			got, cond := resolveCapacityReservations(tc.terms, []ec2types.CapacityReservation{ended}, start)
			if got != nil {
				t.Errorf("reservations %v, want none", got)
			}
			want := metav1.Condition{Type: awsv1.ConditionTypeCapacityReservationsReady, Status: metav1.ConditionTrue,
				Reason: awsv1.ConditionTypeCapacityReservationsReady, Message: tc.message}
			if diff := cmp.Diff(want, cond); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
		})
	}
}

// Each entry shows the reservation's free and total instances as EC2
// reported them.
func TestResolveCapacityReservationCounts(t *testing.T) {
	r := reservation("cr-1", ownerA, ec2types.InstanceMatchCriteriaTargeted)
	r.AvailableInstanceCount, r.TotalInstanceCount = aws.Int32(3), aws.Int32(10)
	got, _ := resolveCapacityReservations([]awsv1.CapacityReservationSelectorTerm{{ID: "cr-1"}}, []ec2types.CapacityReservation{r}, start)
	want := []awsv1.CapacityReservation{{AvailabilityZone: "us-west-2a", ID: "cr-1", InstanceMatchCriteria: awsv1.InstanceMatchCriteriaTargeted,
		InstanceType: "m5.large", OwnerID: ownerA, ReservationType: awsv1.CapacityReservationTypeDefault, State: awsv1.CapacityReservationStateActive,
		AvailableInstanceCount: aws.Int32(3), TotalInstanceCount: aws.Int32(10)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reservations (-want +got):\n%s", diff)
	}
}
