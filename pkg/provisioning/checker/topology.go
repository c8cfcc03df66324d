package checker

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	resourcehelper "k8s.io/component-helpers/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// ambiguous marks a claim whose launchable nodes disagree on a key: a pod
// constrained on that key has no known domain.
const ambiguous = "\x00ambiguous"

// placed is a pod with the labels of the node it runs or will run on.
type placed struct {
	pod   *corev1.Pod
	isNew bool
	// domain returns the node's value for a key; ok false when the node
	// lacks the label.
	domain func(key string) (string, bool)
}

func nodeDomain(name string, l map[string]string) func(string) (string, bool) {
	return func(key string) (string, bool) {
		if v, ok := l[key]; ok {
			return v, true
		}
		if key == corev1.LabelHostname {
			return name, true
		}
		return "", false
	}
}

func claimDomain(i int, c *provisioning.NodeClaim) func(string) (string, bool) {
	nodes, _ := launchable(c)
	hostname := fmt.Sprintf("new-nodeclaim-%d", i)
	// Every pod of the claim asks, for every key its terms name: the
	// answer is worked out once per key.
	type answer struct {
		value string
		ok    bool
	}
	known := map[string]answer{}
	return func(key string) (string, bool) {
		if key == corev1.LabelHostname {
			return hostname, true
		}
		if a, ok := known[key]; ok {
			return a.value, a.ok
		}
		a := answer{ambiguous, true}
		values := map[string]bool{}
		for _, n := range nodes {
			values[n.node.Labels[key]] = true
		}
		if len(values) == 1 {
			for v := range values {
				a = answer{v, v != ""}
			}
		}
		known[key] = a
		return a.value, a.ok
	}
}

func placements(in provisioning.Input, r provisioning.Result) []placed {
	var out []placed
	nodes := map[string]*provisioning.Node{}
	for _, n := range in.Nodes {
		nodes[n.Name] = n
		for _, p := range n.Pods {
			out = append(out, placed{pod: p, domain: nodeDomain(n.Name, n.Labels)})
		}
	}
	for _, nom := range r.Nominations {
		if n, ok := nodes[nom.NodeName]; ok {
			out = append(out, placed{pod: nom.Pod, isNew: true, domain: nodeDomain(n.Name, n.Labels)})
		}
	}
	for i, c := range r.NewNodeClaims {
		d := claimDomain(i, c)
		for _, p := range c.Pods {
			out = append(out, placed{pod: p, isNew: true, domain: d})
		}
	}
	return out
}

// term is a pod-affinity term with its namespaces resolved.
type term struct {
	key        string
	selector   labels.Selector
	namespaces map[string]bool // nil: all
}

func (t term) matches(p *corev1.Pod) bool {
	return (t.namespaces == nil || t.namespaces[p.Namespace]) && t.selector.Matches(labels.Set(p.Labels))
}

func resolveTerm(owner *corev1.Pod, at corev1.PodAffinityTerm, namespaces map[string]map[string]string) (term, error) {
	ls := at.LabelSelector.DeepCopy()
	if ls == nil {
		ls = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "nothing", Operator: metav1.LabelSelectorOpIn, Values: []string{}}}}
	}
	for _, k := range at.MatchLabelKeys {
		if v, ok := owner.Labels[k]; ok {
			ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return term{}, err
	}
	t := term{key: at.TopologyKey, selector: sel, namespaces: map[string]bool{}}
	switch {
	case at.NamespaceSelector == nil && len(at.Namespaces) == 0:
		t.namespaces[owner.Namespace] = true
	case at.NamespaceSelector == nil:
		for _, n := range at.Namespaces {
			t.namespaces[n] = true
		}
	default:
		nsSel, err := metav1.LabelSelectorAsSelector(at.NamespaceSelector)
		if err != nil {
			return term{}, err
		}
		if nsSel.Empty() {
			t.namespaces = nil
			break
		}
		for _, n := range at.Namespaces {
			t.namespaces[n] = true
		}
		for n, l := range namespaces {
			if nsSel.Matches(labels.Set(l)) {
				t.namespaces[n] = true
			}
		}
	}
	return t, nil
}

func sameDomain(a, b placed, key string) (bool, error) {
	da, oka := a.domain(key)
	db, okb := b.domain(key)
	if !oka || !okb {
		return false, nil
	}
	if da == ambiguous || db == ambiguous {
		return false, fmt.Errorf("pods %s and %s: a node's %s is not decided", a.pod.Name, b.pod.Name, key)
	}
	return da == db, nil
}

// checkTopology verifies required pod affinity and anti-affinity (both
// directions) and DoNotSchedule topology spread for every newly placed pod.
func checkTopology(in provisioning.Input, r provisioning.Result) []error {
	all := placements(in, r)
	idx := newDomainIndex(all)
	var errs []error
	for i, p := range all {
		aff := p.pod.Spec.Affinity
		if aff == nil {
			continue
		}
		if aff.PodAntiAffinity != nil {
			for _, at := range aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				t, err := resolveTerm(p.pod, at, in.Namespaces)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				for _, j := range idx.sharing(p, t.key) {
					q := all[j]
					if i == j || (!p.isNew && !q.isNew) || !t.matches(q.pod) {
						continue
					}
					same, err := sameDomain(p, q, t.key)
					if err != nil {
						errs = append(errs, err)
					} else if same {
						errs = append(errs, fmt.Errorf("pod %s shares its %s with %s despite anti-affinity", p.pod.Name, t.key, q.pod.Name))
					}
				}
			}
		}
		if aff.PodAffinity != nil && p.isNew {
			for _, at := range aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				t, err := resolveTerm(p.pod, at, in.Namespaces)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				errs = append(errs, checkAffinity(all, idx, i, t)...)
			}
		}
	}
	errs = append(errs, checkSpread(in, all)...)
	return errs
}

func checkAffinity(all []placed, idx *domainIndex, i int, t term) []error {
	p := all[i]
	d, ok := p.domain(t.key)
	if !ok || d == ambiguous {
		return []error{fmt.Errorf("pod %s needs affinity on %s but its node has no decided value", p.pod.Name, t.key)}
	}
	// Satisfied when a matching pod shares the domain, or the pod starts
	// its own group: it matches its selector and no pod running before
	// the solve does (new pods elsewhere may be bound after it).
	together, runningElsewhere := false, false
	for _, j := range idx.in(t.key, d) {
		if j != i && t.matches(all[j].pod) {
			together = true
			break
		}
	}
	for _, j := range idx.running {
		q := all[j]
		if j == i || !t.matches(q.pod) {
			continue
		}
		if qd, ok := q.domain(t.key); !ok || qd != d {
			runningElsewhere = true
		}
	}
	if together || (t.matches(p.pod) && !runningElsewhere) {
		return nil
	}
	return []error{fmt.Errorf("pod %s's affinity on %s is not satisfied in %s", p.pod.Name, t.key, d)}
}

// domainIndex lists placements by their domain of a key, so checking a
// pod's terms reads the pods that share its domain, not every pod.
type domainIndex struct {
	all    []placed
	by     map[string]map[string][]int
	undone map[string][]int // placements with no value for the key
	// running are the pods placed before the solve.
	running []int
}

func newDomainIndex(all []placed) *domainIndex {
	idx := &domainIndex{all: all, by: map[string]map[string][]int{}, undone: map[string][]int{}}
	for i, p := range all {
		if !p.isNew {
			idx.running = append(idx.running, i)
		}
	}
	return idx
}

// in lists the placements whose domain of key is d.
func (idx *domainIndex) in(key, d string) []int {
	byDomain, ok := idx.by[key]
	if !ok {
		byDomain = map[string][]int{}
		for i, p := range idx.all {
			if v, ok := p.domain(key); ok {
				byDomain[v] = append(byDomain[v], i)
			} else {
				idx.undone[key] = append(idx.undone[key], i)
			}
		}
		idx.by[key] = byDomain
	}
	return byDomain[d]
}

// sharing lists the placements sameDomain could find p shares key with
// or could not decide: those in p's domain and those whose domain is
// ambiguous; every placement when p's own is ambiguous or missing.
func (idx *domainIndex) sharing(p placed, key string) []int {
	d, ok := p.domain(key)
	if !ok || d == ambiguous {
		out := make([]int, len(idx.all))
		for i := range out {
			out[i] = i
		}
		return out
	}
	return append(slices.Clip(idx.in(key, d)), idx.in(key, ambiguous)...)
}

// checkSpread replays the new placements in the solver's documented
// order (largest requests first, then more required anti-affinity terms
// first, input order for ties) as kube-scheduler
// would bind them, and checks every DoNotSchedule spread at each step:
// count(domain) + self − minimum ≤ maxSkew, the minimum taken over the
// eligible domains (0 when fewer than minDomains exist, and for hostname,
// where a new node is always an empty domain). Counts cover every
// matching pod, running or new, as kube-scheduler counts them.
func checkSpread(in provisioning.Input, all []placed) []error {
	type group struct {
		c      corev1.TopologySpreadConstraint
		sel    labels.Selector
		ns     string
		counts map[string]int
	}
	groups := map[string]*group{}
	groupOf := func(p *corev1.Pod, c corev1.TopologySpreadConstraint) *group {
		ls := c.LabelSelector.DeepCopy()
		for _, k := range c.MatchLabelKeys {
			if v, ok := p.Labels[k]; ok {
				ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
			}
		}
		sel, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			return nil
		}
		id := fmt.Sprintf("%s|%s|%s|%d|%v", p.Namespace, c.TopologyKey, sel, c.MaxSkew, c.MinDomains)
		if g, ok := groups[id]; ok {
			return g
		}
		g := &group{c: c, sel: sel, ns: p.Namespace, counts: map[string]int{}}
		groups[id] = g
		return g
	}
	var fresh []placed
	for _, p := range all {
		if !p.isNew {
			continue
		}
		fresh = append(fresh, p)
		for _, c := range p.pod.Spec.TopologySpreadConstraints {
			if c.WhenUnsatisfiable == corev1.DoNotSchedule {
				groupOf(p.pod, c)
			}
		}
	}
	matches := func(g *group, p *corev1.Pod) bool {
		return p.Namespace == g.ns && g.sel.Matches(labels.Set(p.Labels))
	}
	count := func(p placed) {
		for _, g := range groups {
			if d, ok := p.domain(g.c.TopologyKey); ok && d != ambiguous && matches(g, p.pod) {
				g.counts[d]++
			}
		}
	}
	for _, p := range all {
		if !p.isNew {
			count(p)
		}
	}
	order := map[*corev1.Pod]int{}
	for i, p := range in.Pods {
		order[p] = i
	}
	// The solver's order: cores plus GiB/2, largest first (each pod's
	// size worked out once, not at every comparison).
	sizes := make(map[*corev1.Pod]float64, len(fresh))
	for _, p := range fresh {
		r := resourcehelper.PodRequests(p.pod, resourcehelper.PodResourcesOptions{})
		sizes[p.pod] = float64(r.Cpu().MilliValue())/1000 + float64(r.Memory().Value())/(2<<30)
	}
	size := func(p *corev1.Pod) float64 { return sizes[p] }
	// Then pods with more required anti-affinity terms first.
	antiTerms := func(p *corev1.Pod) int {
		if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
			return len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
		}
		return 0
	}
	slices.SortStableFunc(fresh, func(a, b placed) int {
		if sa, sb := size(a.pod), size(b.pod); sa != sb {
			return cmp.Compare(sb, sa)
		}
		return cmp.Or(cmp.Compare(antiTerms(b.pod), antiTerms(a.pod)), order[a.pod]-order[b.pod])
	})
	universe := map[string][]string{}
	var errs []error
	for _, p := range fresh {
		for _, c := range p.pod.Spec.TopologySpreadConstraints {
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				continue
			}
			g := groupOf(p.pod, c)
			d, ok := p.domain(c.TopologyKey)
			if !ok || d == ambiguous {
				errs = append(errs, fmt.Errorf("pod %s spreads on %s but its node has no decided value", p.pod.Name, c.TopologyKey))
				continue
			}
			minimum := 0
			// Eligible domains depend on the pod's own node affinity.
			eligible := eligibleDomains(universe, in, p.pod, c.TopologyKey)
			if c.TopologyKey != corev1.LabelHostname && len(eligible) > 0 && (c.MinDomains == nil || len(eligible) >= int(*c.MinDomains)) {
				minimum = int(^uint(0) >> 1)
				for _, e := range eligible {
					minimum = min(minimum, g.counts[e])
				}
			}
			self := 0
			if matches(g, p.pod) {
				self = 1
			}
			if g.counts[d]+self-minimum > int(c.MaxSkew) {
				errs = append(errs, fmt.Errorf("spread on %s: pod %s makes domain %s hold %d, the least loaded %d, maxSkew %d", c.TopologyKey, p.pod.Name, d, g.counts[d]+self, minimum, c.MaxSkew))
			}
		}
		count(p)
	}
	return errs
}

// eligibleDomains lists the values of key the pod could reach: existing
// nodes' and every NodePool's instance types' (zones, zone IDs and
// capacity types from offerings; never of a type the NodePool cannot
// launch, its daemonsets not fitting), kept when the pod's own required
// node affinity on key allows them. universe keeps, per key, the values
// before that last step: they are the same for every pod.
func eligibleDomains(universe map[string][]string, in provisioning.Input, pod *corev1.Pod, key string) []string {
	all, ok := universe[key]
	if !ok {
		all = domainsOf(in, key)
		universe[key] = all
	}
	var out []string
	for _, d := range all {
		if podAllows(pod, key, d) {
			out = append(out, d)
		}
	}
	return out
}

func domainsOf(in provisioning.Input, key string) []string {
	set := map[string]bool{}
	for _, n := range in.Nodes {
		if v, ok := n.Labels[key]; ok {
			set[v] = true
		}
	}
	for _, np := range in.NodePools {
		var allowed []string
		for _, r := range np.Spec.Template.Spec.Requirements {
			if r.Key == key && r.Operator == corev1.NodeSelectorOpIn {
				allowed = r.Values
			}
		}
		for _, it := range in.InstanceTypes[np.Name] {
			for _, o := range it.Offerings {
				if !daemonsFit(in, np, it, o) {
					continue
				}
				v := ""
				switch key {
				case v1.LabelZone:
					v = o.Zone
				case v1.CapacityTypeLabelKey:
					v = o.CapacityType
				case v1.LabelZoneID:
					if v = o.ZoneID; v == "" {
						continue
					}
				default:
					continue
				}
				if allowed == nil || slices.Contains(allowed, v) {
					set[v] = true
				}
			}
		}
	}
	var out []string
	for d := range set {
		out = append(out, d)
	}
	return out
}

// podAllows: the pod's nodeSelector and every In/NotIn of its first
// required term on key.
func podAllows(pod *corev1.Pod, key, value string) bool {
	if v, ok := pod.Spec.NodeSelector[key]; ok && v != value {
		return false
	}
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, t := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		ok := true
		for _, e := range t.MatchExpressions {
			if e.Key != key {
				continue
			}
			switch e.Operator {
			case corev1.NodeSelectorOpIn:
				ok = ok && slices.Contains(e.Values, value)
			case corev1.NodeSelectorOpNotIn:
				ok = ok && !slices.Contains(e.Values, value)
			}
		}
		if ok {
			return true
		}
	}
	return false
}
