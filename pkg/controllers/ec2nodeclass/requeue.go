package ec2nodeclass

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// Default periods between two resolutions of one EC2NodeClass.
const (
	// DefaultRefreshPeriod: subnets, security groups, images and
	// reservations change in EC2 with no event on the EC2NodeClass, and a
	// new image for an alias means drift.
	DefaultRefreshPeriod = 5 * time.Minute
	// DefaultNotReadyRefreshPeriod: a class that is not Ready launches
	// nothing, so the tag or subnet someone is adding right now is picked
	// up sooner.
	DefaultNotReadyRefreshPeriod = time.Minute
)

// RequeueAfter is when to resolve status again: notReady while it is not
// Ready, else refresh, or sooner when a listed reservation changes first
// (a capacity block turns expiring, a reservation ends). Both periods
// must be positive.
func RequeueAfter(status awsv1.EC2NodeClassStatus, now time.Time, refresh, notReady time.Duration) time.Duration {
	after := refresh
	if !meta.IsStatusConditionTrue(status.Conditions, awsv1.ConditionTypeReady) {
		after = notReady
	}
	for _, r := range status.CapacityReservations {
		if r.EndTime == nil {
			continue
		}
		changes := []time.Time{r.EndTime.Time}
		if r.ReservationType == awsv1.CapacityReservationTypeCapacityBlock && r.State == awsv1.CapacityReservationStateActive {
			changes = append(changes, r.EndTime.Add(-CapacityBlockExpiringPeriod))
		}
		for _, t := range changes {
			if d := t.Sub(now); d > 0 && d < after {
				after = d
			}
		}
	}
	return after
}

// FailureEvent is the Ready condition to announce in a Warning event,
// nil when there is none: Ready is False now and was not, or was False
// for another reason.
func FailureEvent(old, new []metav1.Condition) *metav1.Condition {
	now := meta.FindStatusCondition(new, awsv1.ConditionTypeReady)
	if now == nil || now.Status != metav1.ConditionFalse {
		return nil
	}
	if was := meta.FindStatusCondition(old, awsv1.ConditionTypeReady); was != nil && was.Status == now.Status && was.Reason == now.Reason {
		return nil
	}
	return now
}
