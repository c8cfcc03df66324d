package provisioning

import (
	"fmt"
	"slices"
	"strings"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
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

// FlavorOf names the flavor of the pod's required term placed by, and
// its rank among the pod's flavors: names are the flavors of the pod's
// terms, in order (flavor-major, a flavor repeated once per term of the
// pod's own). "" without flavors.
func FlavorOf(names []string, term int) string {
	if term < 0 || term >= len(names) || names[term] == "" {
		return ""
	}
	flavors := slices.Compact(slices.Clone(names))
	return fmt.Sprintf("%s (%d of %d)", names[term], slices.Index(flavors, names[term])+1, len(flavors))
}

// FallbackReason explains a claim the solver planned as on-demand though
// its NodePool allows capacity the cloud launches first: which
// reservations of its instance types (in its zones) are full or marked
// unavailable, and which spot offerings are marked unavailable, and why.
// Each capacity type lists at most 5, so FallbackFrom finds both.
func FallbackReason(np *v1.NodePool, c *NodeClaim, unavailable *cloudprovider.UnavailableOfferings) string {
	allowed := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...).Get(v1.CapacityTypeLabelKey)
	if c.CapacityType != v1.CapacityTypeOnDemand || len(c.InstanceTypes) == 0 {
		return ""
	}
	zones := c.Requirements.Get(v1.LabelZone)
	reasons := map[string][]string{}
	for _, it := range c.InstanceTypes {
		for _, o := range it.Offerings {
			if (o.CapacityType != v1.CapacityTypeSpot && o.CapacityType != v1.CapacityTypeReserved) || !allowed.Has(o.CapacityType) || !zones.Has(o.Zone) {
				continue
			}
			key := o.Key(it.Name)
			reason, marked := "", false
			if unavailable != nil {
				reason, marked = unavailable.Reason(key)
			}
			switch {
			case marked:
				reasons[o.CapacityType] = append(reasons[o.CapacityType], key.String()+" "+reason)
			case o.CapacityType == v1.CapacityTypeReserved && !o.IsAvailable():
				reasons[o.CapacityType] = append(reasons[o.CapacityType], key.String()+" full")
			}
		}
	}
	var all []string
	for _, ct := range []string{v1.CapacityTypeReserved, v1.CapacityTypeSpot} {
		rs := reasons[ct]
		slices.Sort(rs)
		if len(rs) > 5 {
			rs = append(rs[:5], fmt.Sprintf("and %d more", len(rs)-5))
		}
		all = append(all, rs...)
	}
	if len(all) == 0 {
		return ""
	}
	return fallbackPrefix + strings.Join(all, ", ")
}

// fallbackPrefix starts every capstan.dev/fallback annotation.
const fallbackPrefix = "preferred capacity unavailable: "

// FallbackFrom is the capacity types a capstan.dev/fallback annotation
// says were unavailable (reserved, spot), in that order.
func FallbackFrom(annotation string) []string {
	var out []string
	items := strings.Split(strings.TrimPrefix(annotation, fallbackPrefix), ", ")
	for _, ct := range []string{v1.CapacityTypeReserved, v1.CapacityTypeSpot} {
		if slices.ContainsFunc(items, func(item string) bool { return strings.HasPrefix(item, ct+"/") }) {
			out = append(out, ct)
		}
	}
	return out
}
