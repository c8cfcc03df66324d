package drain

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// SlackMetric is the histogram of how long before its interruption
// deadline an interrupted node finished draining (negative: late).
const SlackMetric = "capstan_interruption_deadline_slack_seconds"

// poll is how soon a shell that does not watch pods, volumes or the cloud
// looks again while they are on their way; maxBackoff caps the wait
// while PodDisruptionBudgets refuse evictions.
const (
	poll       = time.Second
	maxBackoff = 15 * time.Second
)

// Termination is what a shell gathers about one deleted NodeClaim.
type Termination struct {
	NodeClaim *v1.NodeClaim
	// Node is the NodeClaim's Node; nil when it has none.
	Node *corev1.Node
	// Pods are the pods bound to Node.
	Pods []*corev1.Pod
	// Attachments name the VolumeAttachments still on Node.
	Attachments []string
	// Progress is what the previous step returned for this NodeClaim.
	Progress Progress
	Now      time.Time
}

// Progress is what a shell keeps of one NodeClaim's termination between
// steps; the zero value starts one.
type Progress struct {
	// Evicting are the pods (namespace/name) the last step evicted.
	Evicting []string
	// Refusals counts steps in a row that found a pod it had evicted
	// still there, not leaving: a PodDisruptionBudget refused it.
	Refusals int
	// SlackObserved: an interrupted node's drain finished and its slack
	// was recorded.
	SlackObserved bool
}

// Step is one step of a termination.
type Step struct {
	Effects []effects.Effect
	// Drained: no pod that must leave is left and no volume is attached;
	// the instance may go (Finish).
	Drained bool
	// Done: the NodeClaim's finalizer is removed; the shell may forget
	// its Progress.
	Done bool
	// Poll is when a shell that does not watch pods, volumes and the
	// cloud should look again; 0 when nothing is on its way. Times the
	// step itself moves at come as a RequeueAt effect.
	Poll     time.Duration
	Progress Progress
}

// Drain is the first part of terminating a NodeClaim: its node is
// tainted karpenter.sh/disrupted and deleted (the termination finalizer
// holds it), emptied by the drain plan (PlanDrain), and then waits for
// its volumes to detach. Drained once the instance may go.
func Drain(in Termination) Step {
	node, nc := in.Node, in.NodeClaim
	if node == nil {
		return Step{Drained: true, Progress: in.Progress}
	}
	out := Step{Progress: in.Progress}
	if !hasDisruptedTaint(node) {
		out.Effects = append(out.Effects, effects.DisruptedTaint(node.Name, true))
	}
	if node.DeletionTimestamp == nil {
		out.Effects = append(out.Effects, effects.DeleteNode{Name: node.Name})
	}
	deadline := Deadline(nc)
	plan := PlanDrain(in.Pods, in.Now, deadline)
	if !plan.Drained {
		out.Effects = append(out.Effects, condition(nc, v1.ConditionTypeDrained, metav1.ConditionUnknown, ReasonDraining, in.Now)...)
		out.evict(plan)
		for _, d := range plan.Delete {
			out.Effects = append(out.Effects,
				effects.DeletePod{Namespace: d.Pod.Namespace, Name: d.Pod.Name, GracePeriodSeconds: &d.GracePeriod},
				GracePeriodReached(d.Pod))
		}
		if plan.RequeueAfter > 0 {
			out.Effects = append(out.Effects, effects.RequeueAt{At: in.Now.Add(plan.RequeueAfter)})
		}
		return out
	}
	out.Progress.Evicting, out.Progress.Refusals = nil, 0
	if deadline, ok := TerminationTimestamp(nc); ok && interrupted(nc) && !in.Progress.SlackObserved {
		out.Progress.SlackObserved = true
		out.Effects = append(out.Effects, effects.Observe{Name: SlackMetric, Value: deadline.Sub(in.Now).Seconds()})
	}
	out.Effects = append(out.Effects, condition(nc, v1.ConditionTypeDrained, metav1.ConditionTrue, v1.ConditionTypeDrained, in.Now)...)
	switch {
	case len(in.Attachments) == 0:
		out.Effects = append(out.Effects, condition(nc, v1.ConditionTypeVolumesDetached, metav1.ConditionTrue, v1.ConditionTypeVolumesDetached, in.Now)...)
	case deadline.IsZero() || in.Now.Before(deadline):
		out.Effects = append(out.Effects, WaitingOnVolumes(nc, in.Attachments[0], node.Name))
		out.Effects = append(out.Effects, condition(nc, v1.ConditionTypeVolumesDetached, metav1.ConditionUnknown, ReasonAwaitingVolumeDetachment, in.Now)...)
		out.Poll = poll
		return out
	default:
		// Past the terminationGracePeriod the instance goes with its
		// volumes still attached, as the reference's.
		out.Effects = append(out.Effects, condition(nc, v1.ConditionTypeVolumesDetached, metav1.ConditionFalse, ReasonTerminationGracePeriodElapsed, in.Now)...)
	}
	out.Drained = true
	return out
}

// evict asks the plan's pods to leave. A pod evicted by the last step
// and still here was refused by its PodDisruptionBudget: evictions are
// then retried at growing intervals, 2 s doubling up to 15 s.
func (s *Step) evict(plan Plan) {
	refused := false
	evicting := make([]string, 0, len(plan.Evict))
	for _, p := range plan.Evict {
		key := p.Namespace + "/" + p.Name
		refused = refused || slices.Contains(s.Progress.Evicting, key)
		evicting = append(evicting, key)
		s.Effects = append(s.Effects, effects.EvictPod{Namespace: p.Namespace, Name: p.Name})
	}
	s.Progress.Evicting = evicting
	s.Poll = poll
	if !refused {
		s.Progress.Refusals = 0
		return
	}
	s.Progress.Refusals++
	s.Poll = min(time.Duration(1<<min(s.Progress.Refusals, 4))*time.Second, maxBackoff)
}

// Finish is the second part, once Drain says the instance may go: the
// instance is terminated (gone reports whether the cloud still has it),
// and once it is gone the finalizers are released so the API server
// deletes both (a Node left behind is released by NodeDeleted).
func Finish(nc *v1.NodeClaim, node *corev1.Node, gone bool) Step {
	if !gone {
		return Step{Effects: []effects.Effect{effects.Terminate{NodeClaim: nc}}, Poll: poll}
	}
	out := []effects.Effect{Terminated(nc), effects.RemoveFinalizer{Object: effects.NodeClaimRef(nc.Name), Finalizer: v1.TerminationFinalizer}}
	if node != nil {
		out = append(out, Release(node)...)
	}
	return Step{Effects: out, Done: true}
}

// NodeDeleted cascades a Node's deletion: its NodeClaims (by provider
// id) are deleted too, which drains it; a Node without one (it vanished
// while draining, or never existed) is released at once.
func NodeDeleted(node *corev1.Node, claims []*v1.NodeClaim) []effects.Effect {
	if node.DeletionTimestamp == nil || !slices.Contains(node.Finalizers, v1.TerminationFinalizer) {
		return nil
	}
	if len(claims) == 0 {
		return Release(node)
	}
	var out []effects.Effect
	for _, nc := range claims {
		if nc.DeletionTimestamp == nil {
			out = append(out, effects.DeleteNodeClaim{Name: nc.Name})
		}
	}
	return out
}

// Release drops the termination finalizer from a Node, if it holds it.
func Release(node *corev1.Node) []effects.Effect {
	if !slices.Contains(node.Finalizers, v1.TerminationFinalizer) {
		return nil
	}
	return []effects.Effect{effects.RemoveFinalizer{Object: effects.NodeRef(node.Name), Finalizer: v1.TerminationFinalizer}}
}

// hasDisruptedTaint reports whether the node carries the
// karpenter.sh/disrupted:NoSchedule taint.
func hasDisruptedTaint(node *corev1.Node) bool {
	taint := v1.DisruptedNoScheduleTaint()
	return slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) })
}

func interrupted(nc *v1.NodeClaim) bool {
	c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason)
	return c != nil && c.Reason == string(v1.DisruptionReasonInterrupted)
}

// The termination's events.
const (
	EventTerminated                    = "Terminated"
	EventWaitingOnVolumeAttachments    = "WaitingOnVolumeAttachments"
	EventTerminationGracePeriodReached = "TerminationGracePeriodReached"
)

// Terminated says a NodeClaim's instance is gone.
func Terminated(nc *v1.NodeClaim) effects.Event {
	return effects.Event{Object: effects.NodeClaimRef(nc.Name), Type: corev1.EventTypeNormal, Reason: EventTerminated, Action: "Terminate",
		Message: fmt.Sprintf("instance %s terminated", nc.Status.ProviderID)}
}

// WaitingOnVolumes says a volume attachment still holds a drained node.
func WaitingOnVolumes(nc *v1.NodeClaim, attachment, node string) effects.Event {
	return effects.Event{Object: effects.NodeClaimRef(nc.Name), Type: corev1.EventTypeNormal, Reason: EventWaitingOnVolumeAttachments, Action: "Terminate",
		Message: fmt.Sprintf("volume attachment %s still on node %s", attachment, node)}
}

// GracePeriodReached says a pod was deleted, not evicted, so its grace
// period ends with the node's terminationGracePeriod.
func GracePeriodReached(p *corev1.Pod) effects.Event {
	return effects.Event{Object: effects.PodRef(p.Namespace, p.Name), Type: corev1.EventTypeWarning, Reason: EventTerminationGracePeriodReached, Action: "Delete",
		Message: "deleted so its grace period ends with the node's terminationGracePeriod"}
}
