package drain

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/state"
)

const (
	// mirrorPodAnnotation marks static pods' mirrors; the kubelet owns
	// them.
	mirrorPodAnnotation = "kubernetes.io/config.mirror"
	// The built-in priority classes of pods the cluster needs.
	criticalClusterPriority = "system-cluster-critical"
	criticalNodePriority    = "system-node-critical"
)

// Deletion is a pod to delete outright, with the grace period it gets.
type Deletion struct {
	Pod         *corev1.Pod
	GracePeriod int64
}

// Plan is one step of draining a node.
type Plan struct {
	// Evict are pods to evict through the Eviction API now (PDBs decide).
	Evict []*corev1.Pod
	// Delete are pods whose time is up: their own grace period must start
	// now to end by the deadline, or the deadline has passed.
	Delete []Deletion
	// Drained: no pod that must leave is left.
	Drained bool
	// RequeueAfter is when the plan changes by itself (a pod's early
	// deletion comes due); 0 when only pods leaving can change it.
	RequeueAfter time.Duration
}

// PlanDrain decides the next step. deadline is zero without a
// terminationGracePeriod: then PDBs and do-not-disrupt pods block as long
// as they like. Pods that stay are left alone: static (mirror) pods,
// finished pods and pods tolerating the disrupted taint. The others leave
// in waves, each once the one before has gone, as the reference's
// terminator (groupPodsByPriority, after the kubelet's graceful node
// shutdown): workloads, then DaemonSet pods, so logging and networking
// keep working while the node drains, then critical pods, then critical
// DaemonSet pods (docs/disruption.md, "The drain and its deadline").
func PlanDrain(pods []*corev1.Pod, now, deadline time.Time) Plan {
	var waves [4][]*corev1.Pod
	for _, p := range pods {
		if !mustLeave(p) {
			continue
		}
		wave := 0
		if isCritical(p) {
			wave = 2
		}
		if state.IsDaemonSetPod(p) {
			wave++
		}
		waves[wave] = append(waves[wave], p)
	}
	var current []*corev1.Pod
	for _, w := range waves {
		if len(w) > 0 {
			current = w
			break
		}
	}
	if current == nil {
		return Plan{Drained: true}
	}
	plan := Plan{}
	for _, p := range current {
		if p.DeletionTimestamp != nil {
			continue // already on its way out
		}
		if !deadline.IsZero() {
			grace := podGrace(p)
			deleteAt := deadline.Add(-time.Duration(grace) * time.Second)
			if !now.Before(deadline) {
				plan.Delete = append(plan.Delete, Deletion{Pod: p, GracePeriod: 0})
				continue
			}
			if !now.Before(deleteAt) {
				plan.Delete = append(plan.Delete, Deletion{Pod: p, GracePeriod: int64(deadline.Sub(now).Seconds())})
				continue
			}
			if wait := deleteAt.Sub(now); plan.RequeueAfter == 0 || wait < plan.RequeueAfter {
				plan.RequeueAfter = wait
			}
		}
		// Only the deadline moves a held pod, or the end of its
		// do-not-disrupt duration (state.DoNotDisruptOf, shared with
		// disruption's candidates).
		if dnd := state.DoNotDisruptOf(p, now); dnd.Active {
			if wait := dnd.Until.Sub(now); !dnd.Until.IsZero() && (plan.RequeueAfter == 0 || wait < plan.RequeueAfter) {
				plan.RequeueAfter = wait
			}
			continue
		}
		plan.Evict = append(plan.Evict, p)
	}
	return plan
}

// isCritical reports whether p runs at one of the priority classes the
// cluster needs to work, which the kubelet's graceful node shutdown also
// stops last.
func isCritical(p *corev1.Pod) bool {
	return p.Spec.PriorityClassName == criticalClusterPriority || p.Spec.PriorityClassName == criticalNodePriority
}

// mustLeave reports whether a pod has to be gone before the instance is
// terminated.
func mustLeave(p *corev1.Pod) bool {
	if _, mirror := p.Annotations[mirrorPodAnnotation]; mirror || state.IsTerminal(p) {
		return false
	}
	taint := v1.DisruptedNoScheduleTaint()
	return scheduling.Tolerates(p.Spec.Tolerations, []corev1.Taint{taint}) != nil
}

func podGrace(p *corev1.Pod) int64 {
	if p.Spec.TerminationGracePeriodSeconds != nil {
		return *p.Spec.TerminationGracePeriodSeconds
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

// Deadline is when a deleted NodeClaim's node must be empty: the earlier
// of its deletion plus its terminationGracePeriod and the instant its
// karpenter.sh/nodeclaim-termination-timestamp annotation names (an
// interruption notice's deadline: the instance goes then whatever the
// drain's state); zero when neither bounds it.
func Deadline(nc *v1.NodeClaim) time.Time {
	if nc.DeletionTimestamp == nil {
		return time.Time{}
	}
	var out time.Time
	if nc.Spec.TerminationGracePeriod != nil {
		out = nc.DeletionTimestamp.Add(nc.Spec.TerminationGracePeriod.Duration)
	}
	if at, ok := TerminationTimestamp(nc); ok && (out.IsZero() || at.Before(out)) {
		out = at
	}
	return out
}

// TerminationTimestamp is the instant nc's
// karpenter.sh/nodeclaim-termination-timestamp annotation names, if it
// holds one (RFC 3339).
func TerminationTimestamp(nc *v1.NodeClaim) (time.Time, bool) {
	s, ok := nc.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey]
	if !ok {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339, s)
	return at, err == nil
}
