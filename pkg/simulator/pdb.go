package simulator

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/capstan-dev/capstan/pkg/drain"
)

// pdbsWithStatus are the world's PDBs with the status
// kube-controller-manager's disruption controller would have written by
// now (drain.PDBStatus), which disruption reads; nil without PDBs, so
// runs without them pay nothing.
func (w *world) pdbsWithStatus() []policyv1.PodDisruptionBudget {
	if len(w.pdbs) == 0 {
		return nil
	}
	pods := w.pdbPods("")
	byNamespace := map[string][]*corev1.Pod{}
	for _, p := range pods {
		byNamespace[p.Namespace] = append(byNamespace[p.Namespace], p)
	}
	scales := w.scales()
	out := make([]policyv1.PodDisruptionBudget, len(w.pdbs))
	for i := range w.pdbs {
		out[i] = w.pdbs[i]
		out[i].Status = drain.PDBStatus(&w.pdbs[i], byNamespace[w.pdbs[i].Namespace], scales)
	}
	return out
}

// namespacePDBs are the PDBs of one namespace with their status now, for
// the eviction check (drain.Evictable). Statuses are computed afresh on
// every call, so an eviction counts against the next.
func (w *world) namespacePDBs(namespace string) []*policyv1.PodDisruptionBudget {
	var out []*policyv1.PodDisruptionBudget
	var pods []*corev1.Pod
	var scales drain.Scales
	for i := range w.pdbs {
		if w.pdbs[i].Namespace != namespace {
			continue
		}
		if out == nil {
			pods, scales = w.pdbPods(namespace), w.scales()
		}
		pdb := w.pdbs[i].DeepCopy()
		pdb.Status = drain.PDBStatus(pdb, pods, scales)
		out = append(out, pdb)
	}
	return out
}

// pdbPods are the pods of a namespace ("" for all) as PDBs see them: a
// pod on a node that is not Ready is reported unready, as
// kube-controller-manager's node lifecycle controller marks it (a
// stopped instance's pods until their eviction).
func (w *world) pdbPods(namespace string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range w.sortedPods() {
		if namespace != "" && p.Namespace != namespace {
			continue
		}
		if p.Spec.NodeName != "" && !nodeReady(w.nodes[p.Spec.NodeName]) {
			unready := *p
			unready.Status.Conditions = append(slices.DeleteFunc(slices.Clone(p.Status.Conditions), func(c corev1.PodCondition) bool { return c.Type == corev1.PodReady }),
				corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "NodeNotReady"})
			p = &unready
		}
		out = append(out, p)
	}
	return out
}

func nodeReady(n *corev1.Node) bool {
	if n == nil {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// scales are the workload controllers' replicas by pod, as the
// disruption controller reads their scale: a Deployment's whatever
// ReplicaSet (template) its pods are of. Jobs have no scale, nor do
// DaemonSets, which are not workloads here.
func (w *world) scales() drain.Scales {
	byPod := map[string]*workload{}
	for _, wl := range w.workloads {
		if wl.kind == "Job" {
			continue
		}
		for key := range wl.pods {
			byPod[key] = wl
		}
	}
	return func(p *corev1.Pod) (string, int32, bool) {
		wl, ok := byPod[podKey(p)]
		if !ok {
			return "", 0, false
		}
		return wl.kind + "/" + wl.target(), wl.replicas, true
	}
}
