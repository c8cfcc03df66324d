package drain

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// The reasons of the NodeClaim conditions Drained and VolumesDetached, as
// the reference's termination controller writes them
// (pkg/controllers/node/termination/controller.go, v1.14.1): a True
// condition's reason is its type.
const (
	ReasonDraining                      = "Draining"
	ReasonAwaitingVolumeDetachment      = "AwaitingVolumeDetachment"
	ReasonTerminationGracePeriodElapsed = "TerminationGracePeriodElapsed"
)

// condition sets a condition of nc, unless it already reads so; the
// message is the reason, as the reference's.
func condition(nc *v1.NodeClaim, typ string, status metav1.ConditionStatus, reason string, now time.Time) []effects.Effect {
	message := reason
	if status == metav1.ConditionTrue {
		message = ""
	}
	if c := meta.FindStatusCondition(nc.Status.Conditions, typ); c != nil && c.Status == status && c.Reason == reason && c.Message == message {
		return nil
	}
	return []effects.Effect{effects.SetCondition{Object: effects.NodeClaimRef(nc.Name), Condition: metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(now),
	}}}
}
