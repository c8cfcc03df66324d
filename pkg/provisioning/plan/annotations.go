package plan

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Annotations that explain a NodeClaim's choice, for `capstan explain`
// and for returning to preferred capacity later.
const (
	// FlavorAnnotationKey names the llmaz flavor the NodeClaim serves and
	// its rank in the pod's preference order ("a10g (2 of 3)").
	FlavorAnnotationKey = "capstan.dev/flavor"
	// FallbackAnnotationKey says why the NodeClaim is not on the capacity
	// its NodePool prefers (spot marked unavailable, say).
	FallbackAnnotationKey = "capstan.dev/fallback"
)

// flavorOf names the flavor a planned claim serves: the first of the
// pod's ordered terms the claim's requirements satisfy. names are the
// flavors of the pod's terms, in order.
func flavorOf(c *provisioning.NodeClaim, pod *corev1.Pod, names []string) string {
	aff := pod.Spec.Affinity
	if len(names) == 0 || aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	terms := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i, term := range terms {
		if i >= len(names) {
			break
		}
		if c.Requirements.Compatible(scheduling.NewNodeSelectorRequirements(term.MatchExpressions...), scheduling.WellKnownLabels()) == nil {
			return fmt.Sprintf("%s (%d of %d)", names[i], i+1, len(slices.Compact(slices.Clone(names))))
		}
	}
	return ""
}

// fallbackReason explains a claim the solver planned as on-demand though
// its NodePool allows spot: which spot offerings of its instance types are
// marked unavailable, and why.
func fallbackReason(np *v1.NodePool, c *provisioning.NodeClaim, unavailable *cloudprovider.UnavailableOfferings) string {
	if unavailable == nil || len(c.InstanceTypes) == 0 {
		return ""
	}
	allowed := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...).Get(v1.CapacityTypeLabelKey)
	if !allowed.Has(v1.CapacityTypeSpot) || c.CapacityType != v1.CapacityTypeOnDemand {
		return ""
	}
	var reasons []string
	for _, it := range c.InstanceTypes {
		for _, o := range it.Offerings {
			if o.CapacityType != v1.CapacityTypeSpot {
				continue
			}
			if reason, ok := unavailable.Reason(o.Key(it.Name)); ok {
				reasons = append(reasons, o.Key(it.Name).String()+" "+reason)
			}
		}
	}
	if len(reasons) == 0 {
		return ""
	}
	slices.Sort(reasons)
	if len(reasons) > 5 {
		reasons = append(reasons[:5], fmt.Sprintf("and %d more", len(reasons)-5))
	}
	return "preferred capacity unavailable: " + strings.Join(reasons, ", ")
}
