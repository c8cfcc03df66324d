package lifecycle

import (
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Step is the lifecycle of a NodeClaim not being deleted, as effects: the
// termination finalizer when missing, then what Next decides (its action
// is returned too, so a caller that runs the steps apart — `simulate`
// launches after it registers — can pick its own). A Launch returns the
// effects.Launch whose outcome AfterLaunch turns into effects.
func Step(nc *v1.NodeClaim, node *corev1.Node, now time.Time, t Timeouts, attempts LaunchAttempts) (Action, []effects.Effect) {
	var out []effects.Effect
	if !slices.Contains(nc.Finalizers, v1.TerminationFinalizer) {
		out = append(out, effects.MergeMetadata{Object: effects.NodeClaimRef(nc.Name), Finalizers: []string{v1.TerminationFinalizer}})
	}
	action, wait := Next(nc, node, now, t, attempts)
	if node != nil && action != Register && node.Name == nc.Status.NodeName && meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeRegistered) {
		out = append(out, KeepLabels(nc, node)...)
	}
	switch action {
	case Launch:
		out = append(out, effects.Launch{NodeClaim: nc})
		// After a failed launch the launch timeout is fixed (it counts
		// from the first failure); the backoff the next failure asks for
		// must not carry the step past it.
		if deadline, timed := LaunchDeadline(nc, t.Launch); timed && attempts.Failures > 0 {
			out = append(out, effects.RequeueAt{At: deadline})
		}
	case LaunchTimeout:
		out = append(out, OnFailure(nc, OnLaunchTimeout(nc, t.Launch), now)...)
	case Register:
		out = append(out, register(nc, node, now)...)
	case Initialize:
		out = append(out, initialize(nc, node, now)...)
	case Expire:
		// Its pods were planned onto it and nothing else wakes the
		// provisioner for them (their condition does not change): they
		// are planned again at once, as after a failed launch.
		out = append(out,
			event(nc, corev1.EventTypeWarning, "RegistrationTimeout", "Delete", fmt.Sprintf("no node registered within %s of launch", t.Registration)),
			effects.DeleteNodeClaim{Name: nc.Name, Reason: DeletedRegistrationTimeout},
			effects.TriggerSolve{Immediate: true})
	case Wait:
		if wait > 0 {
			out = append(out, effects.RequeueAt{At: now.Add(wait)})
		}
	}
	return action, out
}

// AfterLaunch turns the cloud's answer to a launch (Create's NodeClaim or
// error) into effects: on success the instance's labels, annotations and
// status recorded, Launched and Ready, an event; on failure what
// OnLaunchError decides (OnFailure).
func AfterLaunch(nc, created *v1.NodeClaim, err error, attempts LaunchAttempts, now time.Time) []effects.Effect {
	if err != nil {
		return OnFailure(nc, OnLaunchError(err, attempts, now), now)
	}
	labels := maps.Clone(nc.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, created.Labels)
	launched := condition(nc, v1.ConditionTypeLaunched, metav1.ConditionTrue, "Launched", "instance "+created.Status.ProviderID, now)
	return []effects.Effect{
		effects.SetLaunchAttempts{NodeClaim: nc.Name},
		// The cloud's annotations (the sim's NodeClass hash) show what the
		// instance was launched with.
		effects.MergeMetadata{Object: effects.NodeClaimRef(nc.Name), Labels: created.Labels, Annotations: created.Annotations},
		effects.SetNodeClaimStatus{Name: nc.Name, ProviderID: created.Status.ProviderID, ImageID: created.Status.ImageID,
			Capacity: created.Status.Capacity, Allocatable: created.Status.Allocatable},
		effects.SetCondition{Object: effects.NodeClaimRef(nc.Name), Condition: launched},
		ready(nc, now, launched),
		event(nc, corev1.EventTypeNormal, "Launched", "Launch", fmt.Sprintf("launched %s (%s, %s)", labels[v1.LabelInstanceType], labels[v1.CapacityTypeLabelKey], labels[v1.LabelZone])),
	}
}

// OnFailure is a failed or timed-out launch's decision as effects, in
// order: the marks, the events, then the NodeClaim deleted and its pods
// planned again at once, or kept with Launched=False until its next
// attempt.
func OnFailure(nc *v1.NodeClaim, f LaunchFailure, now time.Time) []effects.Effect {
	var out []effects.Effect
	if f.Unavailable != nil {
		out = append(out, effects.MarkUnavailable{Error: f.Unavailable})
	}
	for _, e := range f.Events {
		out = append(out, event(nc, e.Type, e.Reason, "Launch", e.Message))
	}
	if f.Delete {
		return append(out,
			effects.SetLaunchAttempts{NodeClaim: nc.Name},
			effects.DeleteNodeClaim{Name: nc.Name},
			effects.TriggerSolve{Immediate: true})
	}
	launched := condition(nc, v1.ConditionTypeLaunched, metav1.ConditionFalse, f.Reason, f.Message, now)
	return append(out,
		effects.SetLaunchAttempts{NodeClaim: nc.Name, Failures: f.Attempts.Failures, Last: f.Attempts.Last},
		effects.SetCondition{Object: effects.NodeClaimRef(nc.Name), Condition: launched},
		ready(nc, now, launched),
		effects.RequeueAt{At: f.Attempts.RetryAt()})
}

// register syncs the Node that joined (SyncNode) and records it.
func register(nc *v1.NodeClaim, node *corev1.Node, now time.Time) []effects.Effect {
	var out []effects.Effect
	if synced, changed := SyncNode(nc, node); changed {
		patch := effects.PatchNode{Name: node.Name, Labels: synced.Labels, Finalizers: []string{v1.TerminationFinalizer}}
		for _, t := range node.Spec.Taints {
			if t.Key == v1.UnregisteredTaintKey {
				patch.RemoveTaints = append(patch.RemoveTaints, t)
			}
		}
		for _, t := range synced.Spec.Taints {
			if !slices.ContainsFunc(node.Spec.Taints, func(o corev1.Taint) bool { return o.MatchTaint(&t) }) {
				patch.AddTaints = append(patch.AddTaints, t)
			}
		}
		out = append(out, patch)
	}
	registered := condition(nc, v1.ConditionTypeRegistered, metav1.ConditionTrue, "Registered", "node "+node.Name, now)
	return append(out,
		effects.SetNodeClaimStatus{Name: nc.Name, NodeName: node.Name},
		effects.SetCondition{Object: effects.NodeClaimRef(nc.Name), Condition: registered},
		ready(nc, now, registered),
		event(nc, corev1.EventTypeNormal, "Registered", "Register", fmt.Sprintf("node %s registered", node.Name)))
}

// KeepLabels puts back on the node a NodeClaim registered the labels that
// Capstan owns (the well-known ones, the hostname aside, and
// cluster.x-k8s.io/interruptible) where they went missing or changed.
// The reference syncs labels once, at registration; seed 000 has the
// interruptible label on the node as long as the instance is
// interruptible, and scheduling reads these labels from the node. Other
// labels (the template's) are left to whoever changed them
// (docs/disruption.md, "Node labels").
func KeepLabels(nc *v1.NodeClaim, node *corev1.Node) []effects.Effect {
	restore := map[string]string{}
	for k, v := range nc.Labels {
		owned := k == v1.InterruptibleLabelKey || (scheduling.IsWellKnown(k) && k != v1.LabelHostname)
		if have, ok := node.Labels[k]; owned && (!ok || have != v) {
			restore[k] = v
		}
	}
	if len(restore) == 0 {
		return nil
	}
	return []effects.Effect{effects.PatchNode{Name: node.Name, Labels: restore}}
}

// initialize labels the Node initialized and records it.
func initialize(nc *v1.NodeClaim, node *corev1.Node, now time.Time) []effects.Effect {
	var out []effects.Effect
	if node.Labels[v1.NodeInitializedLabelKey] != "true" {
		out = append(out, effects.PatchNode{Name: node.Name, Labels: map[string]string{v1.NodeInitializedLabelKey: "true"}})
	}
	initialized := condition(nc, v1.ConditionTypeInitialized, metav1.ConditionTrue, "Initialized", "node is ready", now)
	return append(out,
		effects.SetCondition{Object: effects.NodeClaimRef(nc.Name), Condition: initialized},
		ready(nc, now, initialized))
}

// PodEvent stamps nc's lastPodEventTime at now, when a pod bound to or
// left its node and the last stamp is older than PodEventDedupe.
func PodEvent(nc *v1.NodeClaim, now time.Time) []effects.Effect {
	if !NeedsPodEventUpdate(nc.Status.LastPodEventTime, now) {
		return nil
	}
	return []effects.Effect{effects.SetNodeClaimStatus{Name: nc.Name, LastPodEventTime: ptr.To(metav1.NewTime(now))}}
}

// condition is a NodeClaim condition set at now.
func condition(nc *v1.NodeClaim, t string, s metav1.ConditionStatus, reason, message string, now time.Time) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: message, ObservedGeneration: nc.Generation, LastTransitionTime: metav1.NewTime(now)}
}

// ready is the Ready condition once set is: True when Launched,
// Registered and Initialized all are, else False naming the first that is
// not.
func ready(nc *v1.NodeClaim, now time.Time, set metav1.Condition) effects.SetCondition {
	conds := slices.Clone(nc.Status.Conditions)
	meta.SetStatusCondition(&conds, set)
	c := condition(nc, v1.ConditionTypeReady, metav1.ConditionTrue, "Ready", "", now)
	for _, t := range []string{v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized} {
		if !meta.IsStatusConditionTrue(conds, t) {
			c = condition(nc, v1.ConditionTypeReady, metav1.ConditionFalse, "Not"+t, t+" is not yet true", now)
			break
		}
	}
	return effects.SetCondition{Object: effects.NodeClaimRef(nc.Name), Condition: c}
}

func event(nc *v1.NodeClaim, typ, reason, action, message string) effects.Event {
	return effects.Event{Object: effects.NodeClaimRef(nc.Name), Type: typ, Reason: reason, Action: action, Message: message}
}
