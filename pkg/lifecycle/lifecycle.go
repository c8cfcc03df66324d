package lifecycle

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Action is what the lifecycle does next with a NodeClaim.
type Action int

// Actions, in lifecycle order.
const (
	// Wait: nothing to do until the Node changes.
	Wait Action = iota
	// Launch the instance.
	Launch
	// Register: a Node with the providerID has joined; sync it.
	Register
	// Initialize: the node is Ready, ephemeral and startup taints are gone
	// and extended resources are reported.
	Initialize
	// Expire: not registered within the liveness timeout; delete.
	Expire
	// Done: the NodeClaim is initialized.
	Done
)

// DefaultRegistrationTTL is how long a launched instance may take to
// register its Node before the NodeClaim is deleted (liveness).
const DefaultRegistrationTTL = 15 * time.Minute

// Next decides the lifecycle step from the NodeClaim, its Node (nil until
// one registered) and now. It is pure.
func Next(nc *v1.NodeClaim, node *corev1.Node, now time.Time, registrationTTL time.Duration) (Action, time.Duration) {
	conds := nc.Status.Conditions
	if !meta.IsStatusConditionTrue(conds, v1.ConditionTypeLaunched) {
		return Launch, 0
	}
	if !meta.IsStatusConditionTrue(conds, v1.ConditionTypeRegistered) {
		if node != nil {
			return Register, 0
		}
		launched := meta.FindStatusCondition(conds, v1.ConditionTypeLaunched).LastTransitionTime.Time
		if deadline := launched.Add(registrationTTL); now.Before(deadline) {
			return Wait, deadline.Sub(now)
		}
		return Expire, 0
	}
	if meta.IsStatusConditionTrue(conds, v1.ConditionTypeInitialized) {
		return Done, 0
	}
	if node != nil && Initialized(nc, node) {
		return Initialize, 0
	}
	return Wait, 0
}

// ephemeralTaints are the taints Kubernetes puts on a node that is not
// ready yet and takes off by itself (the reference's
// KnownEphemeralTaints). The node lifecycle controller lifts not-ready a
// moment after the node turns Ready; a NodeClaim initialized in between
// has a node that turns pods away, so provisioning launches another node
// for them.
var ephemeralTaints = []corev1.Taint{
	{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
	{Key: "node.cloudprovider.kubernetes.io/uninitialized", Effect: corev1.TaintEffectNoSchedule},
}

// Initialized reports whether a registered node is ready for pods: Ready,
// none of Kubernetes' ephemeral taints or the NodeClaim's startup taints
// left, and every extended resource the NodeClaim asked for (GPUs …) in
// its allocatable.
func Initialized(nc *v1.NodeClaim, node *corev1.Node) bool {
	ready := false
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return false
	}
	for _, t := range node.Spec.Taints {
		for _, e := range ephemeralTaints {
			if t.MatchTaint(&e) {
				return false
			}
		}
	}
	for _, st := range nc.Spec.StartupTaints {
		for _, t := range node.Spec.Taints {
			if t.MatchTaint(&st) {
				return false
			}
		}
	}
	for name, q := range nc.Spec.Resources.Requests {
		switch name {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage:
			continue
		}
		if a, ok := node.Status.Allocatable[name]; !ok || a.Cmp(q) < 0 {
			return false
		}
	}
	return true
}

// SyncNode returns the node as Capstan registers it: the termination
// finalizer, the NodeClaim's labels and the registered label, its taints
// (unless the node opted out with karpenter.sh/do-not-sync-taints), and
// without the unregistered taint. It reports whether anything changed.
func SyncNode(nc *v1.NodeClaim, node *corev1.Node) (*corev1.Node, bool) {
	out := node.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	for k, v := range nc.Labels {
		out.Labels[k] = v
	}
	out.Labels[v1.NodeRegisteredLabelKey] = "true"
	if !hasFinalizer(out.Finalizers, v1.TerminationFinalizer) {
		out.Finalizers = append(out.Finalizers, v1.TerminationFinalizer)
	}
	var taints []corev1.Taint
	for _, t := range out.Spec.Taints {
		if t.Key != v1.UnregisteredTaintKey {
			taints = append(taints, t)
		}
	}
	if out.Labels[v1.DoNotSyncTaintsLabelKey] != "true" {
		for _, want := range nc.Spec.Taints {
			found := false
			for _, t := range taints {
				found = found || t.MatchTaint(&want)
			}
			if !found {
				taints = append(taints, want)
			}
		}
	}
	out.Spec.Taints = taints
	changed := len(out.Labels) != len(node.Labels) || len(out.Finalizers) != len(node.Finalizers) || len(out.Spec.Taints) != len(node.Spec.Taints)
	for k, v := range out.Labels {
		changed = changed || node.Labels[k] != v
	}
	return out, changed
}

func hasFinalizer(finalizers []string, f string) bool {
	for _, x := range finalizers {
		if x == f {
			return true
		}
	}
	return false
}

// PodEventDedupe is how often a NodeClaim's lastPodEventTime moves at
// most: busy nodes would otherwise write it for every pod.
const PodEventDedupe = 10 * time.Second

// NeedsPodEventUpdate reports whether lastPodEventTime should move to now
// (a pod bound to or left the NodeClaim's node).
func NeedsPodEventUpdate(last metav1.Time, now time.Time) bool {
	return last.IsZero() || now.Sub(last.Time) >= PodEventDedupe
}
