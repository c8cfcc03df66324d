package lifecycle

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// Why the lifecycle deletes a NodeClaim (effects.DeleteNodeClaim's
// Reason; simulate's deletionReason, docs/simulate.md).
const (
	// DeletedRegistrationTimeout: its node never registered.
	DeletedRegistrationTimeout = "RegistrationTimeout"
	// DeletedInstanceTerminated: garbage collection found its instance
	// gone.
	DeletedInstanceTerminated = "InstanceTerminated"
)

// Decision is what garbage collection removes.
type Decision struct {
	// Terminate are instances (as the cloud lists them) no NodeClaim owns.
	Terminate []*v1.NodeClaim
	// Delete are NodeClaims whose instance no longer exists.
	Delete []*v1.NodeClaim
}

// Collect compares the cloud's instances with the NodeClaims. An instance
// is leaked when no NodeClaim records its provider id and it launched more
// than grace ago (younger ones may be mid-launch). A NodeClaim that
// launched and is not being deleted is orphaned when the cloud no longer
// lists its instance.
func Collect(instances []*v1.NodeClaim, claims []v1.NodeClaim, now time.Time, grace time.Duration) Decision {
	owned := map[string]bool{}
	for _, nc := range claims {
		if nc.Status.ProviderID != "" {
			owned[nc.Status.ProviderID] = true
		}
	}
	running := map[string]bool{}
	var d Decision
	for _, inst := range instances {
		running[inst.Status.ProviderID] = true
		if !owned[inst.Status.ProviderID] && now.Sub(inst.CreationTimestamp.Time) > grace {
			d.Terminate = append(d.Terminate, inst)
		}
	}
	for i := range claims {
		nc := &claims[i]
		if nc.DeletionTimestamp != nil || nc.Status.ProviderID == "" || !meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeLaunched) {
			continue
		}
		if !running[nc.Status.ProviderID] {
			d.Delete = append(d.Delete, nc)
		}
	}
	return d
}

// Collected is garbage collection's decision as effects: each leaked
// instance terminated, with an event, and its Nodes (of nodes) deleted,
// which no NodeClaim would take away and which would stay NotReady for
// ever; each orphaned NodeClaim deleted, its node drained, with an
// InstanceGone event.
func Collected(d Decision, nodes []corev1.Node) []effects.Effect {
	var out []effects.Effect
	for _, inst := range d.Terminate {
		out = append(out, effects.Terminate{NodeClaim: inst})
		if inst.Name != "" {
			out = append(out, effects.Event{Object: effects.NodeClaimRef(inst.Name), Type: corev1.EventTypeWarning, Reason: "InstanceLeaked", Action: "Terminate",
				Message: fmt.Sprintf("no NodeClaim owns instance %s; terminated", inst.Status.ProviderID)})
		}
		for _, n := range nodes {
			if n.Spec.ProviderID == inst.Status.ProviderID {
				out = append(out, effects.DeleteNode{Name: n.Name})
			}
		}
	}
	for _, nc := range d.Delete {
		out = append(out,
			effects.Event{Object: effects.NodeClaimRef(nc.Name), Type: corev1.EventTypeWarning, Reason: "InstanceGone", Action: "Delete",
				Message: fmt.Sprintf("instance %s no longer exists", nc.Status.ProviderID)},
			effects.DeleteNodeClaim{Name: nc.Name, Reason: DeletedInstanceTerminated})
	}
	return out
}
