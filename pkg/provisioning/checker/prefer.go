package checker

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// checkPreferNoSchedule: a new NodeClaim carries a PreferNoSchedule taint
// one of its pods does not tolerate only when no NodePool free of such
// taints could have launched a node for that pod alone. It is checked
// where the answer needs no solver: the pod has no required pod
// (anti-)affinity, DoNotSchedule spread or volume, and the untainted
// NodePool sets no limits and no minValues. Elsewhere it stays silent.
func checkPreferNoSchedule(in provisioning.Input, r provisioning.Result) []error {
	var errs []error
	for i, c := range r.NewNodeClaims {
		for _, p := range c.Pods {
			if !avoids(p, c.Taints) || constrained(p) {
				continue
			}
			for _, np := range in.NodePools {
				if np.Name != c.NodePool && !avoids(p, np.Spec.Template.Spec.Taints) && couldLaunch(in, np, p) {
					errs = append(errs, fmt.Errorf("nodeclaim %d (%s): pod %s/%s does not tolerate its PreferNoSchedule taint, yet nodepool %s, without one, could launch a node for it",
						i, c.NodePool, p.Namespace, p.Name, np.Name))
					break
				}
			}
		}
	}
	return errs
}

// avoids reports whether taints hold one the pod does not tolerate, of
// any effect, PreferNoSchedule included.
func avoids(p *corev1.Pod, taints []corev1.Taint) bool {
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), taints, p.Spec.Tolerations, func(*corev1.Taint) bool { return true }, true)
	return untolerated
}

func constrained(p *corev1.Pod) bool {
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return true
		}
	}
	for _, s := range p.Spec.TopologySpreadConstraints {
		if s.WhenUnsatisfiable == corev1.DoNotSchedule {
			return true
		}
	}
	a := p.Spec.Affinity
	return a != nil && ((a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0) ||
		(a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0))
}

// couldLaunch reports whether np could launch a node for p alone: an
// available on-demand or spot offering whose node satisfies np's
// requirements and p's selectors, with room for p and the daemonsets.
func couldLaunch(in provisioning.Input, np *v1.NodePool, p *corev1.Pod) bool {
	if len(np.Spec.Limits) > 0 {
		return false
	}
	reqs := make([]corev1.NodeSelectorRequirement, 0, len(np.Spec.Template.Spec.Requirements))
	for _, r := range np.Spec.Template.Spec.Requirements {
		if r.MinValues != nil {
			return false
		}
		reqs = append(reqs, poolRequirement(r))
	}
	// An empty term matches no node, so no requirements get no selector.
	var selector *nodeaffinity.NodeSelector
	if len(reqs) > 0 {
		var err error
		if selector, err = nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}}}); err != nil {
			return false
		}
	}
	for _, it := range in.InstanceTypes[np.Name] {
		for _, o := range it.Offerings {
			if !o.IsAvailable() || o.ReservationID != "" {
				continue
			}
			labels := map[string]string{v1.NodePoolLabelKey: np.Name}
			for k, v := range np.Spec.Template.ObjectMeta.Labels {
				labels[k] = v
			}
			for k, v := range cloudLabels(it, o) {
				labels[k] = v
			}
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "candidate", Labels: labels}, Spec: corev1.NodeSpec{Taints: np.Spec.Template.Spec.Taints}}
			if (selector != nil && !selector.Match(node)) || len(fits(p, node, "")) > 0 {
				continue
			}
			daemons := daemonsOn(in, node, np.Spec.Template.Spec.StartupTaints)
			if len(checkResources([]*corev1.Pod{p}, daemons, allocatable(it), "")) == 0 && len(checkPorts(daemons, []*corev1.Pod{p}, "")) == 0 {
				return true
			}
		}
	}
	return false
}
