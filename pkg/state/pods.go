package state

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// IsProvisionable reports whether a pod is one Capstan provisions for: not
// bound, not terminating or finished, marked unschedulable by a scheduler
// Capstan serves (decision 10: a configurable list of scheduler names).
func IsProvisionable(pod *corev1.Pod, schedulerNames []string) bool {
	if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil || IsTerminal(pod) {
		return false
	}
	name := pod.Spec.SchedulerName
	if name == "" {
		name = corev1.DefaultSchedulerName
	}
	if !slices.Contains(schedulerNames, name) {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}
	}
	return false
}

// ReasonSchedulerNotServed is the reason simulate gives a pending pod
// whose scheduler Capstan does not serve.
const ReasonSchedulerNotServed = "SchedulerNotServed"

// SchedulerNotServed says why Capstan leaves a pod whose scheduler is
// not among served alone; explain and simulate word it the same.
func SchedulerNotServed(scheduler string, served []string) string {
	return fmt.Sprintf("its scheduler %q is not one Capstan serves (%s); see --scheduler-names", scheduler, strings.Join(served, ", "))
}

// IsTerminal reports whether a pod has finished and frees its node.
func IsTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// IsDaemonSetPod reports whether a DaemonSet owns the pod.
func IsDaemonSetPod(pod *corev1.Pod) bool {
	for _, o := range pod.OwnerReferences {
		if o.Kind == "DaemonSet" && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}
