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
	// Wait: nothing to do until the Node changes or the wait returned
	// with it has passed.
	Wait Action = iota
	// Launch the instance.
	Launch
	// LaunchTimeout: not launched within the launch timeout; delete, so
	// its pods are planned again.
	LaunchTimeout
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

// The lifecycle's timeouts by default: the reference's (kubernetes-sigs/
// karpenter pkg/controllers/nodeclaim/lifecycle/liveness.go: a launch
// timeout of 5 minutes, a registration timeout of 15). The controller's
// flags and `capstan simulate` default to them.
const (
	// DefaultLaunchTimeout is how long a NodeClaim may stay not launched,
	// from its first failed launch (else its creation), before it is
	// deleted.
	DefaultLaunchTimeout = 5 * time.Minute
	// DefaultRegistrationTTL is how long a launched instance may take to
	// register its Node before the NodeClaim is deleted (liveness).
	DefaultRegistrationTTL = 15 * time.Minute
)

// Timeouts bound how long a NodeClaim may take to launch and to register.
type Timeouts struct {
	Launch       time.Duration
	Registration time.Duration
}

// DefaultTimeouts are the default launch and registration timeouts.
func DefaultTimeouts() Timeouts {
	return Timeouts{Launch: DefaultLaunchTimeout, Registration: DefaultRegistrationTTL}
}

// Next decides the lifecycle step from the NodeClaim, its Node (nil until
// one registered), now, the timeouts and the NodeClaim's failed launches
// so far. It is pure. A NodeClaim not launched is launched, unless its
// last launch failed less than the backoff ago (Wait), or the launch
// timeout has passed (LaunchTimeout).
func Next(nc *v1.NodeClaim, node *corev1.Node, now time.Time, t Timeouts, attempts LaunchAttempts) (Action, time.Duration) {
	conds := nc.Status.Conditions
	if !meta.IsStatusConditionTrue(conds, v1.ConditionTypeLaunched) {
		deadline, timed := LaunchDeadline(nc, t.Launch)
		if timed && !now.Before(deadline) {
			return LaunchTimeout, 0
		}
		if retry := attempts.RetryAt(); now.Before(retry) {
			if timed && deadline.Before(retry) {
				return Wait, deadline.Sub(now)
			}
			return Wait, retry.Sub(now)
		}
		return Launch, 0
	}
	if !meta.IsStatusConditionTrue(conds, v1.ConditionTypeRegistered) {
		if node != nil {
			return Register, 0
		}
		launched := meta.FindStatusCondition(conds, v1.ConditionTypeLaunched).LastTransitionTime.Time
		if deadline := launched.Add(t.Registration); now.Before(deadline) {
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

// LaunchDeadline is when a NodeClaim not launched is deleted: the launch
// timeout after its first failed launch (when Launched turned False, as
// the reference measures it), else after its creation. False when
// neither is known or the timeout is not positive.
func LaunchDeadline(nc *v1.NodeClaim, timeout time.Duration) (time.Time, bool) {
	start := nc.CreationTimestamp.Time
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeLaunched); c != nil && c.Status == metav1.ConditionFalse && !c.LastTransitionTime.IsZero() {
		start = c.LastTransitionTime.Time
	}
	if start.IsZero() || timeout <= 0 {
		return time.Time{}, false
	}
	return start.Add(timeout), true
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
