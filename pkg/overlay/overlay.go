package overlay

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Code is what became of an overlay.
type Code string

const (
	// Valid: the overlay applies wherever its requirements select (which
	// may be nowhere), below any overlay of higher weight.
	Valid Code = "Valid"
	// Invalid: RuntimeValidate refused it; it is applied nowhere.
	Invalid Code = v1alpha1.ReasonRuntimeValidation
	// Conflicting: an overlay of the same weight, ordered before it, sets
	// a value it sets on an instance type both select; it is applied
	// nowhere, so no instance type gets half of it.
	Conflicting Code = v1alpha1.ReasonConflict
)

// Verdict is an overlay's outcome and, unless Valid, why.
type Verdict struct {
	Code    Code
	Message string
}

// Result is the instance types with the overlays applied, by NodePool, and
// each overlay's verdict, by name.
type Result struct {
	InstanceTypes map[string][]*cloudprovider.InstanceType
	Verdicts      map[string]Verdict
}

// Apply applies overlays to the instance types its holds for each of
// nodePools (a NodePool missing from its is skipped). Overlays are taken
// in the reference's order (weight descending, then name descending,
// v1alpha1 NodeOverlayList.OrderByWeight): the first to set an offering's
// price or a resource of an instance type wins; one of the same weight
// that would set it again conflicts. its and its instance types are not
// changed: an adjusted instance type is a new value sharing what did not
// change, and a NodePool none of the overlays touch keeps its slice.
func Apply(nodePools []v1.NodePool, its map[string][]*cloudprovider.InstanceType, overlays []v1alpha1.NodeOverlay) Result {
	res := Result{InstanceTypes: make(map[string][]*cloudprovider.InstanceType, len(its)), Verdicts: make(map[string]Verdict, len(overlays))}
	var pools []*pool
	for i := range nodePools {
		np := &nodePools[i]
		types, ok := its[np.Name]
		if !ok {
			continue
		}
		reqs := scheduling.NewLabelRequirements(np.Spec.Template.ObjectMeta.Labels)
		reqs.Add(scheduling.NewRequirement(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, np.Name))
		pools = append(pools, &pool{name: np.Name, reqs: reqs, its: types, updates: map[int]*typeUpdate{}})
	}
	for _, o := range ordered(overlays) {
		res.Verdicts[o.Name] = evaluate(pools, o)
	}
	for name, types := range its {
		res.InstanceTypes[name] = types
	}
	maps.Copy(res.InstanceTypes, build(pools))
	return res
}

// ordered is the reference's application order: weight descending, then
// name descending.
func ordered(overlays []v1alpha1.NodeOverlay) []*v1alpha1.NodeOverlay {
	out := make([]*v1alpha1.NodeOverlay, len(overlays))
	for i := range overlays {
		out[i] = &overlays[i]
	}
	slices.SortStableFunc(out, func(a, b *v1alpha1.NodeOverlay) int {
		if c := cmp.Compare(weight(b), weight(a)); c != 0 {
			return c
		}
		return cmp.Compare(b.Name, a.Name)
	})
	return out
}

func weight(o *v1alpha1.NodeOverlay) int32 { return ptr.Deref(o.Spec.Weight, 0) }

// pool is one NodePool's instance types and the updates the overlays
// evaluated so far make to them, by index in its.
type pool struct {
	name    string
	reqs    scheduling.Requirements
	its     []*cloudprovider.InstanceType
	updates map[int]*typeUpdate
}

// typeUpdate is what the overlays set on one instance type: a price
// change per offering (by index) and extended resources. by and weight
// remember the overlay that last touched each, which is the lowest weight
// so far: only an overlay of that same weight can conflict with it.
type typeUpdate struct {
	prices   map[int]*priceUpdate
	capacity corev1.ResourceList
	// capBy, capWeight and capLast are the lowest-weight overlay that set
	// capacity and the resources it set.
	capBy     string
	capWeight int32
	capLast   corev1.ResourceList
}

type priceUpdate struct {
	change change
	by     string
	weight int32
}

// match is an instance type an overlay selects, with the offerings (by
// index) it selects of it.
type match struct {
	pool      *pool
	it        int
	offerings []int
}

// evaluate validates o, finds what it selects and, unless that conflicts,
// records its updates.
func evaluate(pools []*pool, o *v1alpha1.NodeOverlay) Verdict {
	if err := o.RuntimeValidate(); err != nil {
		return Verdict{Code: Invalid, Message: err.Error()}
	}
	var price *change
	switch {
	case o.Spec.Price != nil:
		c, err := parseChange(*o.Spec.Price, false)
		if err != nil {
			return Verdict{Code: Invalid, Message: err.Error()}
		}
		price = &c
	case o.Spec.PriceAdjustment != nil:
		c, err := parseChange(*o.Spec.PriceAdjustment, true)
		if err != nil {
			return Verdict{Code: Invalid, Message: err.Error()}
		}
		price = &c
	}
	reqs := make(scheduling.Requirements, len(o.Spec.Requirements))
	for _, r := range o.Spec.Requirements {
		reqs.Add(scheduling.NewRequirement(r.Key, r.Operator, r.Values...))
	}
	matches := selected(pools, reqs)
	w := weight(o)
	// Checked for every match before any is recorded, as the reference
	// does, so a conflicting overlay changes nothing anywhere.
	for _, m := range matches {
		if msg := conflict(m, o, price != nil, w); msg != "" {
			return Verdict{Code: Conflicting, Message: msg}
		}
	}
	for _, m := range matches {
		record(m, o, price, w)
	}
	return Verdict{Code: Valid}
}

// selected are the instance types (and their offerings) reqs select in
// each pool: the instance type's labels with the NodePool's name and
// template labels must be compatible with reqs (a key neither defines is
// allowed only where reqs allow its absence), and of its offerings those
// reqs allow; an instance type with no such offering is not selected.
func selected(pools []*pool, reqs scheduling.Requirements) []match {
	filter := cloudprovider.NewOfferingFilter(reqs)
	var out []match
	for _, p := range pools {
		for i, it := range p.its {
			if !compatible(reqs, p.reqs, it.Requirements) {
				continue
			}
			var offerings []int
			for j, of := range it.Offerings {
				if filter.Allows(of) {
					offerings = append(offerings, j)
				}
			}
			if len(offerings) > 0 {
				out = append(out, match{pool: p, it: i, offerings: offerings})
			}
		}
	}
	return out
}

// compatible is the reference's instanceTypeRequirements.IsCompatible
// over the pool's and the instance type's requirements together, without
// building their union for every instance type.
func compatible(want, pool, it scheduling.Requirements) bool {
	for key, w := range want {
		p, inPool := pool[key]
		t, inType := it[key]
		if inPool && !p.Intersects(w) || inType && !t.Intersects(w) {
			return false
		}
		if !inPool && !inType && !w.AllowsAbsent() {
			return false
		}
	}
	return true
}

// conflict says why o conflicts with an overlay recorded on m before it,
// or "" when it does not: an overlay of the same weight set a price o
// sets on the same offering, or a resource o sets on the same instance
// type.
func conflict(m match, o *v1alpha1.NodeOverlay, setsPrice bool, w int32) string {
	u := m.pool.updates[m.it]
	if u == nil {
		return ""
	}
	it := m.pool.its[m.it]
	if setsPrice {
		for _, j := range m.offerings {
			if p := u.prices[j]; p != nil && p.weight == w {
				return fmt.Sprintf("conflict with NodeOverlay %s: both set the price of instance type %s (NodePool %s) with weight %d", p.by, it.Name, m.pool.name, w)
			}
		}
	}
	if u.capLast != nil && u.capWeight == w {
		for name := range o.Spec.Capacity {
			if _, ok := u.capLast[name]; ok {
				return fmt.Sprintf("conflict with NodeOverlay %s: both set %s on instance type %s (NodePool %s) with weight %d", u.capBy, name, it.Name, m.pool.name, w)
			}
		}
	}
	return ""
}

// record adds o's updates to m, below those of the overlays before it.
func record(m match, o *v1alpha1.NodeOverlay, price *change, w int32) {
	u := m.pool.updates[m.it]
	if u == nil {
		u = &typeUpdate{}
		m.pool.updates[m.it] = u
	}
	if price != nil {
		if u.prices == nil {
			u.prices = map[int]*priceUpdate{}
		}
		for _, j := range m.offerings {
			if p := u.prices[j]; p != nil {
				p.by, p.weight = o.Name, w
				continue
			}
			u.prices[j] = &priceUpdate{change: *price, by: o.Name, weight: w}
		}
	}
	if len(o.Spec.Capacity) > 0 {
		if u.capacity == nil {
			u.capacity = corev1.ResourceList{}
		}
		for name, q := range o.Spec.Capacity {
			if _, ok := u.capacity[name]; !ok {
				u.capacity[name] = q
			}
		}
		u.capBy, u.capWeight, u.capLast = o.Name, w, o.Spec.Capacity
	}
}
