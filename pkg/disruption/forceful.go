package disruption

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/drain"
)

// ExpiresAt is when nc has lived for its expireAfter (seed 004); false
// when it never expires (Never, or unset).
func ExpiresAt(nc *v1.NodeClaim) (time.Time, bool) {
	d := nc.Spec.ExpireAfter
	if d.Never || d.Duration == nil || nc.CreationTimestamp.IsZero() {
		return time.Time{}, false
	}
	return nc.CreationTimestamp.Add(*d.Duration), true
}

// MarkForceful records on nc why a forceful method (expiration,
// interruption) deletes it: its DisruptionReason condition (reason, and
// the detail in the message) and, when deadline is set, the
// karpenter.sh/nodeclaim-termination-timestamp annotation the drain must
// finish by (drain.Deadline); an earlier deadline already recorded is
// kept. The caller writes nc and then deletes it. It reports whether
// anything changed.
func MarkForceful(nc *v1.NodeClaim, reason v1.DisruptionReason, message string, deadline, now time.Time) bool {
	changed := false
	if !deadline.IsZero() {
		if at, ok := drain.TerminationTimestamp(nc); !ok || deadline.Before(at) {
			if nc.Annotations == nil {
				nc.Annotations = map[string]string{}
			}
			nc.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey] = deadline.UTC().Format(time.RFC3339)
			changed = true
		}
	}
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason); c != nil && c.Reason == string(reason) {
		return changed
	}
	meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue,
		Reason: string(reason), Message: message, LastTransitionTime: metav1.NewTime(now)})
	return true
}
