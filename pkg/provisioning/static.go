package provisioning

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// ResourceNodes is the NodePool limit (and status.resources entry) on the
// number of nodes; limits.nodes is a static NodePool's only limit.
const ResourceNodes corev1.ResourceName = "nodes"

// StaticNodeClaim is the claim a static NodePool launches for a replica:
// the template's requirements and labels only, no pods and no instance
// types chosen, so the cloud launches the cheapest the template allows,
// as the reference's static provisioning leaves the choice to its
// CloudProvider.Create (designs/static-capacity.md; docs/static.md).
func StaticNodeClaim(np *v1.NodePool) *NodeClaim {
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
	reqs.Add(selectorRequirements(scheduling.NewLabelRequirements(np.Spec.Template.ObjectMeta.Labels))...)
	reqs.Add(scheduling.NewRequirement(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, np.Name))
	return &NodeClaim{
		NodePool:      np.Name,
		Requirements:  reqs,
		Labels:        claimLabels(map[string]string{v1.NodePoolLabelKey: np.Name}, reqs),
		Taints:        np.Spec.Template.Spec.Taints,
		StartupTaints: np.Spec.Template.Spec.StartupTaints,
	}
}

// solvedFor reports whether the solver plans claims from np: never from a
// static NodePool, which launches its replicas, never for pods; pods may
// land on its nodes all the same (docs/static.md).
func solvedFor(np *v1.NodePool) bool { return !np.Static() }
