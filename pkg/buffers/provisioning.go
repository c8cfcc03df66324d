package buffers

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Reasons of the Provisioning condition, the reference's
// (pkg/controllers/capacitybuffer/constants.go, v1.14.1).
const (
	ReasonFitsExistingCapacity    = "FitsExistingCapacity"
	ReasonRequiresNewCapacity     = "RequiresNewCapacity"
	ReasonNotReadyForProvisioning = "NotReadyForProvisioning"
	ReasonBufferEmpty             = "BufferEmpty"
)

// Placement is where one decision put a buffer's virtual pods: on
// capacity that exists (nodes, and NodeClaims already launched), on new
// NodeClaims, or nowhere.
type Placement struct {
	// Existing counts virtual pods by the node they fit, for explain.
	Existing map[string]int
	New      int
	// Unplaced are the virtual pods placed nowhere, with why.
	Unplaced []provisioning.Unplaced
}

// Fitting is how many of the buffer's pods fit existing capacity.
func (p Placement) Fitting() int {
	n := 0
	for _, c := range p.Existing {
		n += c
	}
	return n
}

// Placements sorts a decision's virtual pods by CapacityBuffer
// (namespace/name): its nominations (existing capacity), the pods on the
// NodeClaims it would create, and those it left unplaced.
func Placements(noms []provisioning.Nomination, claims []*provisioning.NodeClaim, unplaced []provisioning.Unplaced) map[types.NamespacedName]Placement {
	out := map[types.NamespacedName]Placement{}
	at := func(p *corev1.Pod) (types.NamespacedName, Placement, bool) {
		kind, ns, name, ok := state.VirtualOwner(p)
		if !ok || kind != state.KindCapacityBuffer {
			return types.NamespacedName{}, Placement{}, false
		}
		key := types.NamespacedName{Namespace: ns, Name: name}
		pl := out[key]
		if pl.Existing == nil {
			pl.Existing = map[string]int{}
		}
		return key, pl, true
	}
	for _, n := range noms {
		if key, pl, ok := at(n.Pod); ok {
			pl.Existing[n.NodeName]++
			out[key] = pl
		}
	}
	for _, c := range claims {
		for _, p := range c.Pods {
			if key, pl, ok := at(p); ok {
				pl.New++
				out[key] = pl
			}
		}
	}
	for _, u := range unplaced {
		if key, pl, ok := at(u.Pod); ok {
			pl.Unplaced = append(pl.Unplaced, u)
			out[key] = pl
		}
	}
	return out
}

// Provisioning is the buffer's Provisioning condition for a placement of
// its pods (status as Size computed it): True when every replica fits
// existing capacity, False while any needs new capacity or fits nowhere
// (a NodePool's limits, say), or when the buffer is not ready or empty
// (the reference's computeProvisioningCondition,
// pkg/controllers/provisioning/buffers.go). A placement of fewer pods
// than the replicas changes nothing. now is the transition time if the
// status changes.
func Provisioning(cb *autoscalingv1beta1.CapacityBuffer, status *autoscalingv1beta1.CapacityBufferStatus, p Placement, now time.Time) {
	c := metav1.Condition{Type: autoscalingv1beta1.ConditionProvisioning, Status: metav1.ConditionFalse, ObservedGeneration: cb.Generation}
	replicas := 0
	if status.Replicas != nil {
		replicas = int(*status.Replicas)
	}
	switch fitting := p.Fitting(); {
	case !meta.IsStatusConditionTrue(status.Conditions, autoscalingv1beta1.ConditionReadyForProvisioning):
		c.Reason, c.Message = ReasonNotReadyForProvisioning, "buffer is not ReadyForProvisioning"
	case replicas == 0:
		c.Reason, c.Message = ReasonBufferEmpty, "buffer has zero desired replicas"
	case p.New > 0 || len(p.Unplaced) > 0:
		c.Reason = ReasonRequiresNewCapacity
		c.Message = fmt.Sprintf("%d/%d virtual pods fit existing capacity, %d need new capacity, %d fit nowhere", fitting, replicas, p.New, len(p.Unplaced))
		if len(p.Unplaced) > 0 {
			c.Message += fmt.Sprintf(" (%s: %s)", p.Unplaced[0].Reason, p.Unplaced[0].Message)
		}
	case fitting < replicas:
		// The decision did not solve all of them (it predates the
		// buffer's replicas): nothing to say yet.
		return
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonFitsExistingCapacity, fmt.Sprintf("all %d virtual pods fit existing capacity", replicas)
	}
	setCondition(&status.Conditions, c, now)
}
