package disruption

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// CloudDriftPoll is how often a NodeClaim's conditions are judged again
// when nothing Capstan watches changed: the cloud's side (a NodeClass's
// resolved reservations) drifts on its own.
const CloudDriftPoll = 5 * time.Minute

// ReservationPoll is how often the cloud is asked whether a reserved
// node is still in its capacity reservation (seed 002: the instance
// leaves it when it ends, and is relabelled on-demand).
const ReservationPoll = time.Minute

// UpdateConditions sets nc's Drifted and Consolidatable conditions as
// seed 004 says: Drifted while the NodeClaim has drifted and the Drift
// gate is on (removed otherwise); Consolidatable once its NodePool's
// consolidateAfter has passed since the last pod event (removed before,
// and under consolidateAfter: Never). Only launched NodeClaims are
// judged. It reports whether anything changed and when Consolidatable
// will flip by itself (zero if it will not).
func UpdateConditions(nc *v1.NodeClaim, np *v1.NodePool, cloudReason string, gate bool, now time.Time) (bool, time.Time) {
	if !meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeLaunched) {
		return false, time.Time{}
	}
	changed := false
	if cond := DriftCondition(nc, np, cloudReason, gate, now); cond != nil {
		changed = meta.SetStatusCondition(&nc.Status.Conditions, *cond)
	} else {
		changed = meta.RemoveStatusCondition(&nc.Status.Conditions, v1.ConditionTypeDrifted)
	}
	at, ok := ConsolidatableAt(nc, np)
	ok = ok && ConsolidationAllowed(np)
	initialized := meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeInitialized)
	if ok && initialized && !now.Before(at) {
		c := metav1.Condition{Type: v1.ConditionTypeConsolidatable, Status: metav1.ConditionTrue, Reason: v1.ConditionTypeConsolidatable,
			Message: "consolidateAfter has passed since the last pod event", LastTransitionTime: metav1.NewTime(now)}
		changed = meta.SetStatusCondition(&nc.Status.Conditions, c) || changed
		return changed, time.Time{}
	}
	changed = meta.RemoveStatusCondition(&nc.Status.Conditions, v1.ConditionTypeConsolidatable) || changed
	if ok && initialized {
		return changed, at
	}
	return changed, time.Time{}
}
