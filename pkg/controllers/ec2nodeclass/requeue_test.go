package ec2nodeclass

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

func readyStatus(s metav1.ConditionStatus, reason string, reservations ...awsv1.CapacityReservation) awsv1.EC2NodeClassStatus {
	return awsv1.EC2NodeClassStatus{
		CapacityReservations: reservations,
		Conditions:           []metav1.Condition{{Type: awsv1.ConditionTypeReady, Status: s, Reason: reason}},
	}
}

func TestRequeueAfter(t *testing.T) {
	end := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: start.Add(d)} }
	cb, def := awsv1.CapacityReservationTypeCapacityBlock, awsv1.CapacityReservationTypeDefault
	active, expiring := awsv1.CapacityReservationStateActive, awsv1.CapacityReservationStateExpiring
	cases := []struct {
		name   string
		status awsv1.EC2NodeClassStatus
		want   time.Duration
	}{
		{"ready: the refresh period", readyStatus(metav1.ConditionTrue, "Ready"), 5 * time.Minute},
		{"not ready: sooner", readyStatus(metav1.ConditionFalse, ReasonSubnetsNotFound), time.Minute},
		{"no conditions yet", awsv1.EC2NodeClassStatus{}, time.Minute},
		{"a reservation ends first", readyStatus(metav1.ConditionTrue, "Ready",
			awsv1.CapacityReservation{ID: "cr-1", ReservationType: def, State: active, EndTime: end(3 * time.Minute)},
			awsv1.CapacityReservation{ID: "cr-2", ReservationType: def, State: active}), 3 * time.Minute},
		{"a capacity block turns expiring first", readyStatus(metav1.ConditionTrue, "Ready",
			awsv1.CapacityReservation{ID: "cr-1", ReservationType: cb, State: active, EndTime: end(CapacityBlockExpiringPeriod + 2*time.Minute)}), 2 * time.Minute},
		{"an expiring block: its end", readyStatus(metav1.ConditionTrue, "Ready",
			awsv1.CapacityReservation{ID: "cr-1", ReservationType: cb, State: expiring, EndTime: end(4 * time.Minute)}), 4 * time.Minute},
		{"changes later than the period", readyStatus(metav1.ConditionFalse, ReasonSubnetsNotFound,
			awsv1.CapacityReservation{ID: "cr-1", ReservationType: def, State: active, EndTime: end(time.Hour)}), time.Minute},
		{"a change in the past is no wake-up", readyStatus(metav1.ConditionTrue, "Ready",
			awsv1.CapacityReservation{ID: "cr-1", ReservationType: def, State: active, EndTime: end(-time.Minute)}), 5 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := RequeueAfter(tc.status, start, DefaultRefreshPeriod, DefaultNotReadyRefreshPeriod); got != tc.want {
				t.Errorf("RequeueAfter %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFailureEvent(t *testing.T) {
	conds := func(s metav1.ConditionStatus, reason string) []metav1.Condition {
		return readyStatus(s, reason).Conditions
	}
	cases := []struct {
		name     string
		old, new []metav1.Condition
		want     string
	}{
		{"first resolution, not ready", nil, conds(metav1.ConditionFalse, ReasonSubnetsNotFound), ReasonSubnetsNotFound},
		{"ready turns false", conds(metav1.ConditionTrue, "Ready"), conds(metav1.ConditionFalse, ReasonAMINotFound), ReasonAMINotFound},
		{"unknown turns false", conds(metav1.ConditionUnknown, ReasonDescribeFailed), conds(metav1.ConditionFalse, ReasonAMINotFound), ReasonAMINotFound},
		{"false for another reason", conds(metav1.ConditionFalse, ReasonSubnetsNotFound), conds(metav1.ConditionFalse, ReasonRoleNotFound), ReasonRoleNotFound},
		{"still false for the same reason", conds(metav1.ConditionFalse, ReasonSubnetsNotFound), conds(metav1.ConditionFalse, ReasonSubnetsNotFound), ""},
		{"ready", nil, conds(metav1.ConditionTrue, "Ready"), ""},
		{"unknown is no failure", conds(metav1.ConditionTrue, "Ready"), conds(metav1.ConditionUnknown, ReasonDescribeFailed), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if c := FailureEvent(tc.old, tc.new); c != nil {
				got = c.Reason
			}
			if got != tc.want {
				t.Errorf("event reason %q, want %q", got, tc.want)
			}
		})
	}
}
