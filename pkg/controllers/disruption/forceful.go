package disruption

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/disruption"
)

// deleteForcefully records why nc goes (disruption.MarkForceful: the
// reason on its status, the deadline in its annotations) and deletes it:
// the termination controller drains it by the deadline, and the
// provisioner launches replacements for its pods at once. Budgets,
// do-not-disrupt and PDBs do not hold it past the deadline (seed 004).
func deleteForcefully(ctx context.Context, c client.Client, recorder events.EventRecorder, metrics *Metrics,
	nc *v1.NodeClaim, reason v1.DisruptionReason, message string, deadline, now time.Time) error {
	marked := nc.DeepCopy()
	if !disruption.MarkForceful(marked, reason, message, deadline, now) && nc.DeletionTimestamp != nil {
		return nil
	}
	// One merge patch, sent to both endpoints: the object's takes the
	// annotation, the status subresource the condition.
	if err := c.Patch(ctx, marked.DeepCopy(), client.MergeFrom(nc)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("recording the termination deadline of nodeclaim %s, %w", nc.Name, err))
	}
	if err := c.Status().Patch(ctx, marked.DeepCopy(), client.MergeFrom(nc)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("recording the disruption reason of nodeclaim %s, %w", nc.Name, err))
	}
	if nc.DeletionTimestamp != nil {
		return nil
	}
	if err := client.IgnoreNotFound(c.Delete(ctx, nc)); err != nil {
		return fmt.Errorf("deleting nodeclaim %s, %w", nc.Name, err)
	}
	metrics.disrupted.WithLabelValues(string(reason)).Inc()
	recorder.Eventf(nc, nil, corev1.EventTypeNormal, "DisruptionTerminating", string(reason), "%s: deleting the node", message)
	if nc.Status.NodeName != "" {
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: nc.Status.NodeName}, node); err == nil {
			recorder.Eventf(node, nil, corev1.EventTypeNormal, "DisruptionTerminating", string(reason), "%s: deleting the node", message)
		}
	}
	return nil
}
