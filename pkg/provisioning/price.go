package provisioning

import (
	"cmp"
	"math"
	"slices"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// launchPlan says how a claim would be bought: the capacity type the cloud
// will pick (the first the claim allows with an available offering, in
// the order reserved, spot, on-demand) and the on-demand price that caps
// spot (spot dearer than the cheapest on-demand option is never used).
type launchPlan struct {
	capacityType string
	spotCap      float64
}

func planLaunch(c *claim, slots map[string]int) launchPlan {
	if c.reservation != "" {
		return launchPlan{capacityType: v1.CapacityTypeReserved, spotCap: math.Inf(1)}
	}
	odMin := math.Inf(1)
	for _, it := range c.options {
		// No offering of a type costs less than its cheapest, and options
		// are in that order: none further on can lower odMin.
		if it.price >= odMin {
			break
		}
		if p, ok := cheapestOffering(it.it, c, v1.CapacityTypeOnDemand, math.Inf(1), slots); ok {
			odMin = min(odMin, p)
		}
	}
	for _, it := range c.options {
		if _, ok := cheapestOffering(it.it, c, v1.CapacityTypeSpot, odMin, slots); ok {
			return launchPlan{capacityType: v1.CapacityTypeSpot, spotCap: odMin}
		}
	}
	return launchPlan{capacityType: v1.CapacityTypeOnDemand, spotCap: odMin}
}

// cheapestOffering is the lowest price of an available offering of the
// capacity type that reqs allow, at most priceCap.
func cheapestOffering(it *cloudprovider.InstanceType, c *claim, capacityType string, priceCap float64, slots map[string]int) (float64, bool) {
	best, found := math.Inf(1), false
	for _, o := range it.Offerings {
		if o.CapacityType != capacityType || o.Price > priceCap || !o.CompatibleWith(c.reqs) || !offeringAvailable(o, c.reservation, slots) {
			continue
		}
		if o.Price < best {
			best, found = o.Price, true
		}
	}
	return best, found
}

// optionPrice is what launching the instance type would cost under the
// plan; types without an offering of the plan's capacity type sort last.
func optionPrice(it *cloudprovider.InstanceType, c *claim, plan launchPlan, slots map[string]int) float64 {
	if p, ok := cheapestOffering(it, c, plan.capacityType, plan.spotCap, slots); ok {
		return p
	}
	if plan.capacityType == v1.CapacityTypeReserved {
		return math.Inf(1)
	}
	if p, ok := cheapestOffering(it, c, v1.CapacityTypeOnDemand, math.Inf(1), slots); ok {
		return 1e9 + p
	}
	return math.Inf(1)
}

// orderOptions sorts a claim's options by launch price, then name, under
// the launch plan it also returns. Only the cheapest keep are needed
// (all when keep is 0): no option launches below its cheapest offering,
// and options are in that order, so once keep are priced and the next
// option's cheapest offering is above all of them, none further on can
// take their place. A claim of a small pod has hundreds of options.
func orderOptions(c *claim, slots map[string]int, keep int) ([]*itData, launchPlan) {
	plan := planLaunch(c, slots)
	type priced struct {
		it    *itData
		price float64
	}
	ps := make([]priced, 0, len(c.options))
	highest := math.Inf(-1)
	for _, it := range c.options {
		if keep > 0 && len(ps) >= keep && it.price > highest {
			break
		}
		p := optionPrice(it.it, c, plan, slots)
		highest = max(highest, p)
		ps = append(ps, priced{it, p})
	}
	slices.SortStableFunc(ps, func(a, b priced) int {
		return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.it.it.Name, b.it.it.Name))
	})
	out := make([]*itData, len(ps))
	for i, p := range ps {
		out[i] = p.it
	}
	return out, plan
}

// truncate keeps at most max options, cheapest first, while keeping every
// minValues satisfiable: options that add a value a minValues still needs
// are kept first. Should minValues need more than max options, all the
// options they need are kept.
func truncate(reqs scheduling.Requirements, options []*itData, maxTypes int) []*itData {
	if len(options) <= maxTypes {
		return options
	}
	keep := make([]bool, len(options))
	kept := 0
	for key, r := range reqs {
		need := r.MinValues()
		if need == 0 {
			continue
		}
		seen := map[string]struct{}{}
		for i, it := range options {
			if keep[i] {
				seen[it.it.Requirements.Get(key).Any()] = struct{}{}
			}
		}
		for i, it := range options {
			if len(seen) >= need {
				break
			}
			v := it.it.Requirements.Get(key).Any()
			if _, dup := seen[v]; dup || keep[i] {
				continue
			}
			seen[v] = struct{}{}
			keep[i] = true
			kept++
		}
	}
	for i := range options {
		if kept >= maxTypes {
			break
		}
		if !keep[i] {
			keep[i] = true
			kept++
		}
	}
	out := make([]*itData, 0, kept)
	for i, it := range options {
		if keep[i] {
			out = append(out, it)
		}
	}
	return out
}
