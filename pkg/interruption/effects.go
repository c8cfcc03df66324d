package interruption

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// MetricReceived counts interruption notices received, by kind, each
// once (effects.Metric).
const MetricReceived = "capstan_interruption_received_total"

// ActionInterrupt is the events API action of a notice's event.
const ActionInterrupt = "Interrupt"

// actionEffects are one action's effects, in the order they apply:
// counted, the offering marked, the interruption expected or the
// NodeClaim deleted forcefully, then the notice reported on the
// NodeClaim and its Node.
func actionEffects(a Action, nc *v1.NodeClaim, now time.Time) []effects.Effect {
	n := a.Notice
	var out []effects.Effect
	if a.Received {
		out = append(out, effects.Metric{Name: MetricReceived, Labels: []string{string(n.Kind)}, Value: 1})
	}
	if a.MarkUnavailable {
		ice := cloudprovider.NewInsufficientCapacityError(nil)
		ice.Add(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: n.InstanceType, Zone: n.Zone}, string(n.Kind))
		out = append(out, effects.MarkUnavailable{Error: ice})
	}
	if a.Expect {
		out = append(out, effects.SetCondition{Object: effects.NodeClaimRef(nc.Name), Condition: metav1.Condition{
			Type: v1.ConditionTypeInterruptionExpected, Status: metav1.ConditionTrue, Reason: string(n.Kind), Message: n.Message,
			LastTransitionTime: metav1.NewTime(now)}})
	}
	if a.Interrupt {
		out = append(out, disruption.Forceful(nc, v1.DisruptionReasonInterrupted, fmt.Sprintf("interrupted (%s)", n.Kind), n.Deadline, now)...)
	}
	if a.Event != "" {
		objs := []effects.Ref{effects.NodeClaimRef(nc.Name)}
		if a.Node != "" {
			objs = append(objs, effects.NodeRef(a.Node))
		}
		for _, obj := range objs {
			out = append(out, effects.Event{Object: obj, Type: corev1.EventTypeWarning, Reason: string(n.Kind), Action: ActionInterrupt, Message: a.Event})
		}
	}
	return out
}
