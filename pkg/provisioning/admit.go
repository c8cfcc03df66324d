package provisioning

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// pin is a topology key a claim must be narrowed on before it takes a
// pod, with the domains allowed, best first.
type pin struct {
	key     string
	domains []string
}

// countExisting records the pods already running (or nominated) on nodes
// into the counters, and their anti-affinity terms as inverse owners.
func (s *solver) countExisting(namespaces map[string]map[string]string) {
	// What a shape's pods count in is the same on every node: work it
	// out once per shape.
	shapes := map[int]*shapeCounters{}
	for _, n := range s.nodes {
		if n.node.Groups == nil {
			for _, pod := range n.node.Pods {
				n.count(s.topo.shapeCounters(pod, namespaces), 1)
			}
			continue
		}
		for _, g := range n.node.Groups {
			sc, ok := shapes[g.Shape]
			if !ok {
				sc = s.topo.shapeCounters(g.Pod, namespaces)
				shapes[g.Shape] = sc
			}
			n.count(sc, g.Count)
		}
	}
}

// shapeCounters are the counters a pod of some shape counts in: the
// inverse anti-affinity counters of its own terms and the counters whose
// selectors match it.
type shapeCounters struct {
	inverse, matched []*counter
}

func (t *topology) shapeCounters(pod *corev1.Pod, namespaces map[string]map[string]string) *shapeCounters {
	sc := &shapeCounters{inverse: t.addInverse(pod, namespaces)}
	for _, c := range t.counters {
		if c.matches(pod) {
			sc.matched = append(sc.matched, c)
		}
	}
	return sc
}

// count records n pods counting in sc in the node's domains.
func (n *nodeData) count(sc *shapeCounters, pods int32) {
	for _, c := range sc.inverse {
		if d, ok := n.domain(c.key); ok {
			c.recordN(d, pods)
		}
	}
	for _, c := range sc.matched {
		if d, ok := n.domain(c.key); ok {
			c.recordN(d, pods)
		}
	}
}

// matchCounters precomputes, per pod, which counters its placement moves
// and which inverse anti-affinity terms apply to it. Every counter exists
// by now: all pods were prepared first.
func (s *solver) matchCounters(pods []*podData) {
	for _, p := range pods {
		for _, c := range s.topo.counters {
			if c.matches(p.pod) {
				p.matched = append(p.matched, c)
			}
		}
		for _, c := range s.topo.inverse {
			if c.matches(p.pod) {
				p.inverse = append(p.inverse, c)
			}
		}
		slices.SortFunc(p.matched, func(a, b *counter) int { return compareStrings(a.key, b.key) })
		slices.SortFunc(p.inverse, func(a, b *counter) int { return compareStrings(a.key, b.key) })
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// record counts a placed pod in its domains.
func (t *topology) record(p *podData, domain func(string) (string, bool)) {
	for _, c := range p.matched {
		if d, ok := domain(c.key); ok {
			c.record(d)
		}
	}
	for _, c := range p.owned {
		if d, ok := domain(c.key); ok {
			c.record(d)
		}
	}
}

// domains is every domain of key a pod could land in: existing nodes'
// values and what NodePools can launch (their requirements' values, or
// their instance types' — zones come from offerings). Hostnames are
// unbounded (every new node is a new one) and not listed.
func (t *topology) domains(key string, nodes []*nodeData, pools []*poolData) []string {
	if d, ok := t.universe[key]; ok {
		return d
	}
	d := collectDomains(key, nodes, pools)
	t.universe[key] = d
	return d
}

// toleratedDomains are the domains of the nodes and NodePools whose taints
// the pod tolerates: a spread's eligible domains under nodeTaintsPolicy
// Honor.
func toleratedDomains(key string, pod *corev1.Pod, nodes []*nodeData, pools []*poolData) []string {
	var ns []*nodeData
	for _, n := range nodes {
		if scheduling.Tolerates(pod.Spec.Tolerations, n.node.Taints) == nil {
			ns = append(ns, n)
		}
	}
	var ps []*poolData
	for _, p := range pools {
		if scheduling.Tolerates(pod.Spec.Tolerations, p.taints) == nil {
			ps = append(ps, p)
		}
	}
	return collectDomains(key, ns, ps)
}

func collectDomains(key string, nodes []*nodeData, pools []*poolData) []string {
	set := sets.New[string]()
	for _, n := range nodes {
		if v, ok := n.domain(key); ok {
			set.Insert(v)
		}
	}
	for _, p := range pools {
		r := p.reqs.Get(key)
		if r.Operator() == corev1.NodeSelectorOpIn {
			set.Insert(r.Values()...)
			continue
		}
		for _, it := range p.its {
			itr, ok := it.it.Requirements[key]
			if !ok || itr.Operator() != corev1.NodeSelectorOpIn {
				continue
			}
			for _, v := range itr.Values() {
				if r.Has(v) {
					set.Insert(v)
				}
			}
		}
	}
	return sets.List(set)
}

// minCounts computes, for a variant's constraints, the global minimum
// each spread compares against: over the domains the pod's required node
// affinity allows (nodeAffinityPolicy Honor, the default) — any of its
// terms, not only the variant's, as kube-scheduler filters nodes.
func (t *topology) minCounts(p *podData, v *variant, s *solver) []int32 {
	if len(v.constraints) == 0 {
		return nil
	}
	mins := make([]int32, len(v.constraints))
	for i, c := range v.constraints {
		if c.kind != kindSpread || c.counter.key == corev1.LabelHostname {
			continue
		}
		all := t.domains(c.counter.key, s.nodes, s.pools)
		if c.honorTaints {
			all = toleratedDomains(c.counter.key, p.pod, s.nodes, s.pools)
		}
		eligible := all
		if !c.ignoreAffine {
			eligible = make([]string, 0, len(all))
			for _, d := range all {
				for _, term := range p.terms {
					if term.Get(c.counter.key).Has(d) {
						eligible = append(eligible, d)
						break
					}
				}
			}
		}
		mins[i] = c.minCount(eligible)
	}
	return mins
}

// possible is false when a variant's topology rules out every domain of
// a key other than hostname (a new node always brings a hostname of its
// own), so no node or claim could take the pod: the preferences workload
// asks every pod first for a zone anti-affinity that no zone satisfies
// once each holds a pod, and trying every claim there only to fail was
// most of its time. Existing nodes may lack the key, which anti-affinity
// allows, so then it answers true.
func (t *topology) possible(v *variant, mins []int32, s *solver) bool {
	for i, c := range v.constraints {
		key := c.counter.key
		if key == corev1.LabelHostname || (c.kind == kindAntiAffinity && len(s.nodes) > 0) {
			continue
		}
		if !slices.ContainsFunc(t.domains(key, s.nodes, s.pools), func(d string) bool { return c.allows(d, mins[i]) }) {
			return false
		}
	}
	return true
}

// admitNode checks a pod's topology on an existing node or in-flight
// claim, whose domains are fixed.
func (t *topology) admitNode(p *podData, v *variant, mins []int32, n *nodeData) bool {
	for i, c := range v.constraints {
		d, ok := n.domain(c.counter.key)
		if !ok {
			if c.kind == kindAntiAffinity {
				continue
			}
			return false
		}
		if !c.allows(d, mins[i]) {
			return false
		}
	}
	for _, inv := range p.inverse {
		if d, ok := n.domain(inv.key); ok && inv.counts[d] > 0 {
			return false
		}
	}
	return true
}

// admitFixed is the part of admitClaim that needs no allocation: the
// constraints on keys the claim has already fixed (its hostname, a pinned
// zone). It lets the solver skip most claims cheaply.
func (t *topology) admitFixed(p *podData, v *variant, mins []int32, c *claim) bool {
	for i, con := range v.constraints {
		if con.counter.key == corev1.LabelHostname {
			if !con.allowsCount(c.counted(con.counter), mins[i]) {
				return false
			}
			continue
		}
		if d, fixed := c.domain(con.counter.key); fixed && !con.allows(d, mins[i]) {
			return false
		}
	}
	for _, inv := range p.inverse {
		if inv.key == corev1.LabelHostname {
			if c.counted(inv) > 0 {
				return false
			}
			continue
		}
		if d, fixed := c.domain(inv.key); fixed && inv.counts[d] > 0 {
			return false
		}
	}
	return true
}

// admitClaim checks a pod's topology on a planned claim with requirements
// reqs. Keys the claim has not fixed yet (a zone among several) come back
// as pins: the domains the pod may use, best first; the claim must be
// narrowed to one of them. Keys of counters the pod moves are pinned too,
// so every count lands in a known domain.
func (t *topology) admitClaim(p *podData, v *variant, mins []int32, c *claim, reqs scheduling.Requirements, s *solver) ([]pin, bool) {
	var pins []pin
	pinFor := func(key string) *pin {
		for i := range pins {
			if pins[i].key == key {
				return &pins[i]
			}
		}
		var domains []string
		rc, rp := reqs.Get(key), v.reqs.Get(key)
		for _, d := range t.domains(key, s.nodes, s.pools) {
			if rc.Has(d) && rp.Has(d) {
				domains = append(domains, d)
			}
		}
		pins = append(pins, pin{key: key, domains: domains})
		return &pins[len(pins)-1]
	}
	for i, con := range v.constraints {
		key := con.counter.key
		if d, fixed := claimDomain(c.hostname, reqs, key); fixed {
			if !con.allows(d, mins[i]) {
				return nil, false
			}
			continue
		}
		pn := pinFor(key)
		pn.domains = slices.DeleteFunc(pn.domains, func(d string) bool { return !con.allows(d, mins[i]) })
		if con.kind != kindAntiAffinity {
			slices.SortStableFunc(pn.domains, con.rank)
		}
		if len(pn.domains) == 0 {
			return nil, false
		}
	}
	for _, inv := range p.inverse {
		if d, fixed := claimDomain(c.hostname, reqs, inv.key); fixed {
			if inv.counts[d] > 0 {
				return nil, false
			}
			continue
		}
		pn := pinFor(inv.key)
		pn.domains = slices.DeleteFunc(pn.domains, func(d string) bool { return inv.counts[d] > 0 })
		if len(pn.domains) == 0 {
			return nil, false
		}
	}
	for _, m := range append(p.matched, p.owned...) {
		if _, fixed := claimDomain(c.hostname, reqs, m.key); !fixed {
			if pn := pinFor(m.key); len(pn.domains) == 0 {
				return nil, false
			}
		}
	}
	return pins, true
}

// claimDomain is claim.domain for requirements not yet stored on it.
func claimDomain(hostname string, reqs scheduling.Requirements, key string) (string, bool) {
	if key == corev1.LabelHostname {
		return hostname, true
	}
	if r, ok := reqs[key]; ok && r.Len() == 1 && !r.AllowsAbsent() {
		return r.Any(), true
	}
	return "", false
}

// applyPins narrows requirements and options to one domain per pin, the
// first (best) domain that leaves an instance type with an offering.
// options is scratch the caller owns: it is narrowed in place.
func (s *solver) applyPins(pins []pin, reqs scheduling.Requirements, options []*itData, reservation string) (scheduling.Requirements, []*itData, bool) {
	for _, pn := range pins {
		found := false
		for _, d := range pn.domains {
			narrowed := reqs.Intersection(scheduling.NewRequirements(scheduling.NewRequirement(pn.key, corev1.NodeSelectorOpIn, d)))
			// The options meet reqs, so only the pinned key can rule
			// one out.
			pinned, offerings := narrowed[pn.key], cloudprovider.NewOfferingFilter(narrowed)
			kept := s.pinned[:0]
			for _, it := range options {
				if r, ok := it.it.Requirements[pn.key]; ok && !r.Intersects(pinned) {
					continue
				}
				if hasOffering(it.it, offerings, reservation, nil) {
					kept = append(kept, it)
				}
			}
			s.pinned = kept
			if len(kept) > 0 {
				reqs, options, found = narrowed, append(options[:0], kept...), true
				break
			}
		}
		if !found {
			return nil, nil, false
		}
	}
	return reqs, options, true
}
