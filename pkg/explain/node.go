package explain

import (
	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/provisioning/plan"
)

// disruptionPending stands where candidacy and blockers will be once
// disruption lands.
const disruptionPending = "Capstan does not disrupt nodes yet (consolidation, drift and expiry are to come): nothing will replace this node but an interruption, a liveness timeout or a deletion"

// ForNode reports a NodeClaim (and its Node's name): where it is in
// its lifecycle, its conditions, and why it is this instance: what the
// solver preferred and why it fell back.
func ForNode(nc *v1.NodeClaim) Node {
	out := Node{
		Node: nc.Status.NodeName, NodeClaim: nc.Name, NodePool: nc.Labels[v1.NodePoolLabelKey],
		InstanceType: nc.Labels[v1.LabelInstanceType], CapacityType: nc.Labels[v1.CapacityTypeLabelKey],
		Zone: nc.Labels[v1.LabelZone], ReservationID: nc.Labels[v1.LabelCapacityReservationID],
		Preferred: nc.Annotations[plan.PreferredAnnotationKey], Fallback: nc.Annotations[plan.FallbackAnnotationKey],
		Flavor: nc.Annotations[plan.FlavorAnnotationKey], Disruption: disruptionPending, Conditions: []Condition{},
	}
	for _, c := range nc.Status.Conditions {
		out.Conditions = append(out.Conditions, Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message, Since: c.LastTransitionTime.Time})
	}
	conds := nc.Status.Conditions
	switch {
	case nc.DeletionTimestamp != nil:
		out.Lifecycle = "Deleting"
	case !meta.IsStatusConditionTrue(conds, v1.ConditionTypeLaunched):
		out.Lifecycle = "Launching"
	case !meta.IsStatusConditionTrue(conds, v1.ConditionTypeRegistered):
		out.Lifecycle = "Registering"
	case !meta.IsStatusConditionTrue(conds, v1.ConditionTypeInitialized):
		out.Lifecycle = "Initializing"
	default:
		out.Lifecycle = "Ready"
	}
	return out
}
