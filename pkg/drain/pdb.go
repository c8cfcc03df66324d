package drain

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/capstan-dev/capstan/pkg/state"
)

// Scales finds the scale of a pod's controller, as the disruption
// controller reads it: the controller whose replicas count (for a
// Deployment's pods the Deployment, whichever ReplicaSet owns them) and
// its desired replicas. found is false for a controller with no scale (a
// DaemonSet, a Job).
type Scales func(pod *corev1.Pod) (controller string, replicas int32, found bool)

// PDBStatus is the status kube-controller-manager's disruption
// controller would write for pdb over pods (any namespace: only the
// PDB's own are counted), for a cluster without one, such as simulate's:
//
//   - ExpectedPods: the pods the selector matches that are neither
//     finished nor being deleted; for maxUnavailable and percentages,
//     when scales is given, the sum of their controllers' replicas
//     instead, as the controller counts (pods without a controller are
//     left out, and a controller without a scale allows no disruption).
//     The scale is what keeps a budget from allowing a second eviction
//     while the first pod's replacement does not exist yet.
//   - CurrentHealthy: the selected pods that are Healthy.
//   - DesiredHealthy: minAvailable (a percentage of ExpectedPods, rounded
//     up), or ExpectedPods less maxUnavailable (likewise), at least 0.
//   - DisruptionsAllowed: CurrentHealthy − DesiredHealthy, at least 0,
//     and 0 while nothing is expected, so that the first pods are safe.
//
// With neither minAvailable nor maxUnavailable (policy/v1 defaults
// neither) the controller expects nothing, so no disruption is allowed.
// A nil selector selects nothing, an empty one every pod of the
// namespace. Conditions and DisruptedPods are left out: they need a
// clock and the evictions in flight.
func PDBStatus(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod, scales Scales) policyv1.PodDisruptionBudgetStatus {
	status := policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation}
	selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		// The controller's fail-safe: a budget it cannot evaluate allows
		// nothing.
		return status
	}
	var selected []*corev1.Pod
	for _, p := range pods {
		if p.Namespace != pdb.Namespace || p.DeletionTimestamp != nil || state.IsTerminal(p) || !selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		selected = append(selected, p)
		if Healthy(p) {
			status.CurrentHealthy++
		}
	}
	spec := pdb.Spec
	expected, scaled := int32(len(selected)), scales != nil && (spec.MaxUnavailable != nil || spec.MinAvailable != nil && spec.MinAvailable.Type == intstr.String)
	if scaled {
		var ok bool
		if expected, ok = scaleOf(selected, scales); !ok {
			return status
		}
	}
	var desired int
	switch {
	case spec.MaxUnavailable != nil:
		unavailable, err := intstr.GetScaledValueFromIntOrPercent(spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return status
		}
		desired = max(0, int(expected)-unavailable)
	case spec.MinAvailable != nil:
		if desired, err = intstr.GetScaledValueFromIntOrPercent(spec.MinAvailable, int(expected), true); err != nil {
			return status
		}
	default:
		return status
	}
	status.ExpectedPods, status.DesiredHealthy = expected, int32(desired)
	if expected > 0 {
		status.DisruptionsAllowed = max(0, status.CurrentHealthy-status.DesiredHealthy)
	}
	return status
}

// scaleOf sums the replicas of the pods' controllers, each once; false
// when one has no scale.
func scaleOf(pods []*corev1.Pod, scales Scales) (int32, bool) {
	seen := map[string]bool{}
	var sum int32
	for _, p := range pods {
		if metav1.GetControllerOf(p) == nil {
			continue
		}
		controller, replicas, found := scales(p)
		if !found {
			return 0, false
		}
		if !seen[controller] {
			seen[controller] = true
			sum += replicas
		}
	}
	return sum, true
}

// Healthy is what PDBs count as available. In a cluster that is the
// pod's Ready condition; simulate runs no kubelet that reports one, so a
// pod is healthy when it is bound to a node, neither pending nor
// finished, not being deleted, and not reported unready (a Ready
// condition False, as kube-controller-manager marks the pods of a node
// that stopped responding).
func Healthy(p *corev1.Pod) bool {
	if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || state.IsTerminal(p) || p.Status.Phase == corev1.PodPending {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return true
}

// Evictable is the PDB that makes the Eviction API refuse to evict pod
// now, or nil when the eviction would go through. As the API server
// decides:
//
//   - pods not yet running (pending), finished or already being deleted
//     are evicted whatever their PDBs say;
//   - a pod that more than one PDB selects is refused (the API supports
//     one); the first of them is returned;
//   - an unhealthy pod goes when its PDB's unhealthyPodEvictionPolicy is
//     AlwaysAllow, or when the budget is met without it (CurrentHealthy
//     at least DesiredHealthy, which is above 0);
//   - otherwise the PDB refuses when its status is older than its spec or
//     it allows no disruption.
//
// The API server takes one disruption from the PDB per eviction; a caller
// evicting several pods against the same statuses must do the same
// (decrement Status.DisruptionsAllowed) or recompute them in between.
func Evictable(pod *corev1.Pod, pdbs []*policyv1.PodDisruptionBudget) *policyv1.PodDisruptionBudget {
	if pod.DeletionTimestamp != nil || state.IsTerminal(pod) || pending(pod) {
		return nil
	}
	var selecting []*policyv1.PodDisruptionBudget
	for _, pdb := range pdbs {
		if pdb.Namespace != pod.Namespace {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		// The API server skips a PDB whose selector does not parse.
		if err == nil && selector.Matches(labels.Set(pod.Labels)) {
			selecting = append(selecting, pdb)
		}
	}
	switch {
	case len(selecting) == 0:
		return nil
	case len(selecting) > 1:
		return selecting[0]
	}
	pdb := selecting[0]
	if !Healthy(pod) {
		if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
			return nil
		}
		if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
			return nil
		}
	}
	if pdb.Status.ObservedGeneration < pdb.Generation || pdb.Status.DisruptionsAllowed <= 0 {
		return pdb
	}
	return nil
}

// pending: the pod is not running yet, so evicting it disrupts nothing.
// Simulated pods carry no phase; an unbound one is pending.
func pending(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodPending || p.Status.Phase == "" && p.Spec.NodeName == ""
}
