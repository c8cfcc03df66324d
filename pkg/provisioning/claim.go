package provisioning

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// claim is a NodeClaim being planned in this solve.
type claim struct {
	// index is the claim's place in solver.claims and solver.rooms.
	index    int
	pool     *poolData
	reqs     scheduling.Requirements
	requests scheduling.Resources
	// options are the instance types that can still host every pod, in
	// the NodePool's price order (cheapest first: filters keep it).
	options []*itData
	// maxAlloc is the componentwise maximum allocatable over options: a
	// pod that does not fit it is rejected without filtering.
	maxAlloc scheduling.Resources
	// committed is charged to the NodePool's limits: the largest capacity
	// the claim could launch as (see capacityStats).
	committed scheduling.Resources
	// slack is what the cheapest option has left: a pod within it adds
	// nothing to the claim's price.
	slack scheduling.Resources
	// price is the cheapest option's.
	price     float64
	pods      []*podData
	hostPorts []scheduling.HostPort
	// reservation is the reservation the claim is booked into, if any.
	reservation string
	// settled: which offerings the claim may use no longer depends on
	// reservation slots (it is booked into one, or may use none), so only
	// new requirements or room can rule an option out.
	settled bool
	// hostname is the claim's own hostname domain until a node registers.
	hostname string
	// fixed are the domains reqs fix (see domain).
	fixed []fixedDomain
	// hostCounts are the claim's own counts in hostname counters (see
	// counted).
	hostCounts []hostCount
	// group is the atomic group the claim is launched for (its first
	// member's key), or "": a claim serves at most one group, so
	// releasing one group's launch never takes another's node.
	group string
}

// domain is the claim's topology domain for key: its hostname, or the one
// value its requirements allow; not fixed while several remain. Every
// pod's search asks it of every claim, so the fixed values are looked up
// in a short list rather than worked out from the requirements each time.
func (c *claim) domain(key string) (string, bool) {
	if key == corev1.LabelHostname {
		return c.hostname, true
	}
	for _, f := range c.fixed {
		if f.key == key {
			return f.value, true
		}
	}
	return "", false
}

// hostCount is how many of a claim's pods a hostname counter counts.
type hostCount struct {
	counter *counter
	n       int32
}

// counted is what counter's counts hold for the claim's hostname, read
// from the claim: every pod's search asks it of every claim, and a few
// pointer comparisons beat hashing the hostname into the counter's map.
func (c *claim) counted(counter *counter) int32 {
	for _, h := range c.hostCounts {
		if h.counter == counter {
			return h.n
		}
	}
	return 0
}

// count notes, after topology.record, the pod in the claim's own hostname
// counts.
func (c *claim) count(p *podData) {
	for _, set := range [][]*counter{p.matched, p.owned} {
		for _, k := range set {
			if k.key != corev1.LabelHostname {
				continue
			}
			i := slices.IndexFunc(c.hostCounts, func(h hostCount) bool { return h.counter == k })
			if i < 0 {
				c.hostCounts = append(c.hostCounts, hostCount{counter: k})
				i = len(c.hostCounts) - 1
				k.claims.add(c.index)
			}
			c.hostCounts[i].n++
		}
	}
}

// room is a claim's slack but for extended resources (see solver.rooms),
// and how many pods have been added to it since it was planned: what
// growth depends on changes only then.
type room struct {
	cpu, memory, pods, storage int64
	version                    int32
}

func roomOf(c *claim, version int32) room {
	return room{cpu: c.slack.CPU, memory: c.slack.Memory, pods: c.slack.Pods, storage: c.slack.Storage, version: version}
}

// fixedDomain is a key the claim's requirements fix to one value.
type fixedDomain struct{ key, value string }

// setReqs sets the claim's requirements and the domains they fix.
func (c *claim) setReqs(reqs scheduling.Requirements) {
	c.reqs, c.fixed = reqs, c.fixed[:0]
	for key := range reqs {
		if d, ok := claimDomain(c.hostname, reqs, key); ok {
			c.fixed = append(c.fixed, fixedDomain{key, d})
		}
	}
}

// interned is options as a claim keeps them: a list equal to one kept
// before is that one. Claims of pods alike keep the same instance types,
// and a list of hundreds for each was most of what a solve holds on to
// (and twice that in peak memory). Claims never change a list in place.
func (s *solver) interned(options []*itData) []*itData {
	h := uint64(14695981039346656037)
	for _, it := range options {
		h = (h ^ it.id) * 1099511628211
	}
	for _, o := range s.optionSets[h] {
		if slices.Equal(o, options) {
			return o
		}
	}
	o := slices.Clone(options)
	s.optionSets[h] = append(s.optionSets[h], o)
	return o
}

// filterResult is why filtering found no instance type, when it did not.
type filterResult struct {
	options []*itData
	reason  Reason
	// largest is the componentwise maximum of what the instance types the
	// requirements allow have room for, to name the resources no type has
	// enough of.
	largest scheduling.Resources
}

// filter keeps the instance types that fit requests and whose labels and
// offerings reqs allow; reservation restricts offerings to one
// reservation. slots says how many free slots a reservation has left.
func filter(its []*itData, reqs scheduling.Requirements, requests scheduling.Resources, reservation string, slots map[string]int) filterResult {
	return filterInto(make([]*itData, 0, len(its)), its, reqs, requests, reservation, slots)
}

// filterInto is filter appending to buf[:0], so a caller that usually
// rejects the result can reuse one buffer and copy only what it keeps.
func filterInto(buf, its []*itData, reqs scheduling.Requirements, requests scheduling.Resources, reservation string, slots map[string]int) filterResult {
	out := buf[:0]
	reason := ReasonIncompatibleRequirements
	var largest scheduling.Resources
	offerings := cloudprovider.NewOfferingFilter(reqs)
	for _, it := range its {
		if it.it.Requirements.Intersects(reqs) != nil {
			continue
		}
		if !requests.Fits(it.alloc) {
			if reason != ReasonNoInstanceTypeFits {
				largest = it.alloc
			} else {
				largest = largest.Max(it.alloc)
			}
			reason = maxReason(reason, ReasonNoInstanceTypeFits)
			continue
		}
		if !hasOffering(it.it, offerings, reservation, slots) {
			reason = ReasonAllOfferingsUnavailable
			continue
		}
		out = append(out, it)
	}
	if len(out) > 0 {
		return filterResult{options: out}
	}
	return filterResult{options: out, reason: reason, largest: largest}
}

// fitting is the options with room for requests, appended to buf[:0].
func fitting(buf, options []*itData, requests scheduling.Resources) []*itData {
	out := buf[:0]
	for _, it := range options {
		if requests.Fits(it.alloc) {
			out = append(out, it)
		}
	}
	return out
}

func maxReason(a, b Reason) Reason {
	if b.specificity() > a.specificity() {
		return b
	}
	return a
}

// hasOffering reports whether the instance type has an offering the
// filter allows with capacity left.
func hasOffering(it *cloudprovider.InstanceType, f cloudprovider.OfferingFilter, reservation string, slots map[string]int) bool {
	for _, o := range it.Offerings {
		if f.Allows(o) && offeringAvailable(o, reservation, slots) {
			return true
		}
	}
	return false
}

// offeringAvailable: a claim booked into a reservation may use only that
// reservation's offering, whose slot it already holds; otherwise reserved
// offerings are limited by the solve's own slot accounting, which starts
// from Available and goes down as claims book them. Nil slots defer the
// reservation question (bookCapacity answers it, with its own reason).
func offeringAvailable(o *cloudprovider.Offering, booked string, slots map[string]int) bool {
	switch {
	case booked != "":
		return o.ReservationID == booked
	case o.ReservationID != "" && slots == nil:
		return true
	case o.ReservationID != "":
		return slots[o.ReservationID] > 0
	}
	return o.IsAvailable()
}

// slackOf is what c's cheapest option (the first: options keep the
// NodePool's price order) has left, and its price.
func slackOf(c *claim) (scheduling.Resources, float64) {
	return c.options[0].alloc.Sub(c.requests), c.options[0].price
}

// capacityStats are the componentwise maxima of what pods may use over
// the claim's options, and of capacity over those it may launch as: the
// first maxTypes (toNodeClaim keeps none larger), all of them when
// minValues may need more. Charging the NodePool's limits with the
// largest of hundreds of options a claim never launches as ran a
// 10,000,000-core limit out at 25,000 claims of a few cores each.
func capacityStats(options []*itData, reqs scheduling.Requirements, maxTypes int) (maxAlloc, maxCapacity scheduling.Resources) {
	launchable := len(options)
	if !reqs.HasMinValues() {
		launchable = min(launchable, maxTypes)
	}
	for i, it := range options {
		if i == 0 {
			maxAlloc, maxCapacity = it.alloc, it.capacity
			continue
		}
		maxAlloc = maxAlloc.Max(it.alloc)
		if i < launchable {
			maxCapacity = maxCapacity.Max(it.capacity)
		}
	}
	return maxAlloc, maxCapacity
}

// minValuesShort are the keys whose minValues the options do not cover
// with distinct label values, with the number of values they do cover.
func minValuesShort(reqs scheduling.Requirements, options []*itData) map[string]int {
	its := make([]*cloudprovider.InstanceType, len(options))
	for i, o := range options {
		its[i] = o.it
	}
	_, short := MinValuesMet(reqs, its)
	return short
}

// MinValuesMet is how many of its, from the first, cover every minValues
// of reqs with distinct label values: 0 without minValues, len(its) when
// they never do. short are then the keys all of its fall short of, with
// the number of values they cover; nil when none. The solver and
// consolidation's truncation of a replacement's types count alike.
func MinValuesMet(reqs scheduling.Requirements, its []*cloudprovider.InstanceType) (n int, short map[string]int) {
	if !reqs.HasMinValues() {
		return 0, nil
	}
	seen := map[string]map[string]struct{}{}
	for i, it := range its {
		met := true
		for key, r := range reqs {
			if r.MinValues() == 0 {
				continue
			}
			if seen[key] == nil {
				seen[key] = map[string]struct{}{}
			}
			if v := it.Requirements.Get(key); v.Len() == 1 {
				seen[key][v.Any()] = struct{}{}
			} else {
				for _, val := range v.Values() {
					if r.Has(val) {
						seen[key][val] = struct{}{}
					}
				}
			}
			met = met && len(seen[key]) >= r.MinValues()
		}
		if met {
			return i + 1, nil
		}
	}
	for key, r := range reqs {
		if min := r.MinValues(); min > 0 && len(seen[key]) < min {
			if short == nil {
				short = map[string]int{}
			}
			short[key] = len(seen[key])
		}
	}
	return len(its), short
}

// toNodeClaim renders the planned claim, its options ordered and truncated.
func (c *claim) toNodeClaim(maxTypes int, slots map[string]int) *NodeClaim {
	// minValues may need options beyond the cheapest maxTypes. Options
	// larger than the NodePool's limits were charged for are left out.
	keep := maxTypes
	if c.reqs.HasMinValues() {
		keep = 0
	}
	c.options = slices.DeleteFunc(slices.Clone(c.options), func(it *itData) bool { return !it.capacity.Fits(c.committed) })
	options, plan := orderOptions(c, slots, keep)
	options = truncate(c.reqs, options, maxTypes)
	its := make([]*cloudprovider.InstanceType, len(options))
	names := make([]string, len(options))
	for i, o := range options {
		its[i] = o.it
		names[i] = o.it.Name
	}
	reqs := c.reqs.Clone()
	reqs.Add(scheduling.NewRequirementWithMinValues(v1.LabelInstanceType, corev1.NodeSelectorOpIn, minValuesOf(c.reqs, v1.LabelInstanceType), names...))
	pods := make([]*corev1.Pod, len(c.pods))
	terms := make([]int, len(c.pods))
	for i, p := range c.pods {
		pods[i], terms[i] = p.pod, p.term
	}
	return &NodeClaim{
		NodePool:      c.pool.name,
		Requirements:  reqs,
		InstanceTypes: its,
		Pods:          pods,
		Terms:         terms,
		Requests:      c.requests.ResourceList(),
		ReservationID: c.reservation,
		CapacityType:  plan.capacityType,
		Labels:        claimLabels(c.pool.labels, c.reqs),
		AtomicGroup:   c.group,
		Taints:        c.pool.np.Spec.Template.Spec.Taints,
		StartupTaints: c.pool.np.Spec.Template.Spec.StartupTaints,
	}
}

// claimLabels are the labels the node must carry: the NodePool's, and
// every label the requirements fix (team In [ml] → team=ml; Exists → a
// value), as the solver already assumed when it placed pods on the claim.
// Well-known labels are left to the cloud, which sets them from the
// instance it launches.
func claimLabels(poolLabels map[string]string, reqs scheduling.Requirements) map[string]string {
	labels := make(map[string]string, len(poolLabels))
	for k, v := range reqs.Labels() {
		if !scheduling.IsWellKnown(k) {
			labels[k] = v
		}
	}
	for k, v := range poolLabels {
		labels[k] = v
	}
	return labels
}

func minValuesOf(reqs scheduling.Requirements, key string) *int {
	if r, ok := reqs[key]; ok && r.MinValues() > 0 {
		m := r.MinValues()
		return &m
	}
	return nil
}
