package provisioning

import (
	"maps"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// PreferredAnnotationKey records on a NodeClaim what the solver preferred
// (its first instance type and capacity type), so a later fallback and a
// return to the preferred capacity can be explained.
const PreferredAnnotationKey = "capstan.dev/preferred"

// NewNodeClaim renders a planned claim as the object to create: the
// NodePool's template (labels, annotations, taints, startup taints,
// NodeClass, expiry, grace period), the solver's requirements and
// resources, the NodePool hash (decision 13) and an owner reference, so
// deleting the NodePool deletes its NodeClaims.
func NewNodeClaim(np *v1.NodePool, c *NodeClaim, name string) *v1.NodeClaim {
	tmpl := np.Spec.Template
	nc := &v1.NodeClaim{}
	nc.Name = name
	nc.Labels = maps.Clone(tmpl.ObjectMeta.Labels)
	if nc.Labels == nil {
		nc.Labels = map[string]string{}
	}
	maps.Copy(nc.Labels, c.Labels)
	nc.Labels[v1.NodePoolLabelKey] = np.Name
	nc.Annotations = maps.Clone(tmpl.ObjectMeta.Annotations)
	if nc.Annotations == nil {
		nc.Annotations = map[string]string{}
	}
	nc.Annotations[v1.NodePoolHashAnnotationKey] = np.Hash()
	nc.Annotations[v1.NodePoolHashVersionAnnotationKey] = v1.NodePoolHashVersion
	if pool := scheduling.NewNodeSelectorRequirementsWithMinValues(tmpl.Spec.Requirements...); pool.HasMinValues() {
		nc.Annotations[v1.NodeClaimMinValuesRelaxedAnnotationKey] = strconv.FormatBool(MinValuesRelaxed(pool, c.Requirements))
	}
	if len(c.InstanceTypes) > 0 {
		preferred := []string{c.InstanceTypes[0].Name}
		if ct := c.Requirements.Get(v1.CapacityTypeLabelKey); ct.Len() == 1 {
			preferred = append(preferred, ct.Any())
		}
		nc.Annotations[PreferredAnnotationKey] = strings.Join(preferred, "/")
	}
	nc.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: v1.SchemeGroupVersion.String(), Kind: "NodePool", Name: np.Name, UID: np.UID,
		BlockOwnerDeletion: ptr.To(true),
	}}
	nc.Spec.Requirements = c.Requirements.NodeSelectorRequirements()
	nc.Spec.Resources.Requests = c.Requests
	nc.Spec.Taints = tmpl.Spec.Taints
	nc.Spec.StartupTaints = tmpl.Spec.StartupTaints
	nc.Spec.NodeClassRef = tmpl.Spec.NodeClassRef
	nc.Spec.ExpireAfter = tmpl.Spec.ExpireAfter
	nc.Spec.TerminationGracePeriod = tmpl.Spec.TerminationGracePeriod
	return nc
}
