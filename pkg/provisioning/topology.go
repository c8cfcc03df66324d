package provisioning

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// counter counts, per topology domain, the pods one label selector
// matches in a set of namespaces. Every constraint with the same key,
// selector and namespaces shares one counter, so the counts are kept once.
type counter struct {
	key        string
	selector   labels.Selector
	namespaces sets.Set[string] // nil: every namespace
	counts     map[string]int32
	total      int32
	// claims are the planned claims a hostname counter counts a pod on.
	claims claimSet
}

func (c *counter) matches(pod *corev1.Pod) bool {
	if c.namespaces != nil && !c.namespaces.Has(pod.Namespace) {
		return false
	}
	return c.selector.Matches(labels.Set(pod.Labels))
}

func (c *counter) record(domain string) { c.recordN(domain, 1) }

func (c *counter) recordN(domain string, pods int32) {
	c.counts[domain] += pods
	c.total += pods
}

type constraintKind int

const (
	kindSpread constraintKind = iota
	kindAffinity
	kindAntiAffinity
)

// constraint is one of a pod's pod-affinity, anti-affinity or topology
// spread terms, bound to its counter.
type constraint struct {
	kind    constraintKind
	counter *counter
	// selfMatch: the owning pod matches its own selector (it counts
	// toward its own spread; it may start its own affinity group).
	selfMatch bool
	maxSkew   int32
	// minDomains below the number of eligible domains makes the global
	// minimum 0, as kube-scheduler does.
	minDomains int32
	// honorTaints (nodeTaintsPolicy Honor) leaves out domains only nodes or
	// NodePools with untolerated taints reach; ignoreAffine
	// (nodeAffinityPolicy Ignore) keeps domains the pod's node affinity
	// excludes.
	honorTaints  bool
	ignoreAffine bool
	weight       int32
}

// topology tracks domains and counts across a solve.
type topology struct {
	counters map[string]*counter
	// inverse are the required anti-affinity terms of pods already placed
	// or running: a pod their selector matches must stay out of their
	// owners' domains. counts here count owners.
	inverse map[string]*counter
	// universe lists, per key, every domain a pod could land in: existing
	// nodes' labels and what the NodePools' instance types can launch.
	universe map[string][]string
	// hosts sizes a hostname counter's counts up front: it gets one per
	// node, and growing it was a good part of counting existing pods.
	hosts int
}

func newTopology() *topology {
	return &topology{counters: map[string]*counter{}, inverse: map[string]*counter{}, universe: map[string][]string{}}
}

// counterFor returns the shared counter for a key, selector and namespace
// set, creating it if needed.
func (t *topology) counterFor(table map[string]*counter, key string, selector labels.Selector, namespaces sets.Set[string]) *counter {
	var id strings.Builder
	id.WriteString(key)
	id.WriteByte('|')
	id.WriteString(selector.String())
	id.WriteByte('|')
	if namespaces == nil {
		id.WriteString("*")
	} else {
		id.WriteString(strings.Join(sets.List(namespaces), ","))
	}
	if c, ok := table[id.String()]; ok {
		return c
	}
	c := &counter{key: key, selector: selector, namespaces: namespaces, counts: map[string]int32{}}
	if key == corev1.LabelHostname {
		c.counts = make(map[string]int32, t.hosts)
	}
	table[id.String()] = c
	return c
}

// constraints builds a pod's hard and soft topology constraints.
// namespaces maps namespace names to their labels, for namespaceSelector.
func (t *topology) constraints(pod *corev1.Pod, namespaces map[string]map[string]string) (hard, soft []*constraint, err error) {
	if aff := pod.Spec.Affinity; aff != nil {
		if pa := aff.PodAffinity; pa != nil {
			for _, term := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				c, err := t.termConstraint(pod, term, kindAffinity, 0, namespaces)
				if err != nil {
					return nil, nil, err
				}
				hard = append(hard, c)
			}
			for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				c, err := t.termConstraint(pod, w.PodAffinityTerm, kindAffinity, w.Weight, namespaces)
				if err != nil {
					return nil, nil, err
				}
				soft = append(soft, c)
			}
		}
		if pa := aff.PodAntiAffinity; pa != nil {
			for _, term := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				c, err := t.termConstraint(pod, term, kindAntiAffinity, 0, namespaces)
				if err != nil {
					return nil, nil, err
				}
				hard = append(hard, c)
			}
			for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				c, err := t.termConstraint(pod, w.PodAffinityTerm, kindAntiAffinity, w.Weight, namespaces)
				if err != nil {
					return nil, nil, err
				}
				soft = append(soft, c)
			}
		}
	}
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		c, err := t.spreadConstraint(pod, tsc)
		if err != nil {
			return nil, nil, err
		}
		if tsc.WhenUnsatisfiable == corev1.ScheduleAnyway {
			soft = append(soft, c)
		} else {
			hard = append(hard, c)
		}
	}
	return hard, soft, nil
}

func (t *topology) termConstraint(pod *corev1.Pod, term corev1.PodAffinityTerm, kind constraintKind, weight int32, namespaces map[string]map[string]string) (*constraint, error) {
	selector, err := selectorWithKeys(term.LabelSelector, pod, term.MatchLabelKeys, term.MismatchLabelKeys)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: affinity term on %s, %w", pod.Namespace, pod.Name, term.TopologyKey, err)
	}
	ns, err := termNamespaces(pod, term, namespaces)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: affinity term on %s, %w", pod.Namespace, pod.Name, term.TopologyKey, err)
	}
	c := &constraint{kind: kind, counter: t.counterFor(t.counters, term.TopologyKey, selector, ns), weight: weight}
	c.selfMatch = c.counter.matches(pod)
	return c, nil
}

func (t *topology) spreadConstraint(pod *corev1.Pod, tsc corev1.TopologySpreadConstraint) (*constraint, error) {
	selector, err := selectorWithKeys(tsc.LabelSelector, pod, tsc.MatchLabelKeys, nil)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: topology spread on %s, %w", pod.Namespace, pod.Name, tsc.TopologyKey, err)
	}
	c := &constraint{
		kind:        kindSpread,
		counter:     t.counterFor(t.counters, tsc.TopologyKey, selector, sets.New(pod.Namespace)),
		maxSkew:     tsc.MaxSkew,
		honorTaints: tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor,
		// ScheduleAnyway spreads weigh 1 among preferences.
		weight: 1,
	}
	c.ignoreAffine = tsc.NodeAffinityPolicy != nil && *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyIgnore
	if tsc.MinDomains != nil {
		c.minDomains = *tsc.MinDomains
	}
	c.selfMatch = c.counter.matches(pod)
	return c, nil
}

// selectorWithKeys is the term's selector narrowed by matchLabelKeys (the
// pod's own values must match) and mismatchLabelKeys (must differ).
func selectorWithKeys(ls *metav1.LabelSelector, pod *corev1.Pod, matchKeys, mismatchKeys []string) (labels.Selector, error) {
	if ls == nil {
		return labels.Nothing(), nil
	}
	ls = ls.DeepCopy()
	for _, k := range matchKeys {
		if v, ok := pod.Labels[k]; ok {
			ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
		}
	}
	for _, k := range mismatchKeys {
		if v, ok := pod.Labels[k]; ok {
			ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpNotIn, Values: []string{v}})
		}
	}
	s, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("invalid label selector, %w", err)
	}
	return s, nil
}

// termNamespaces: the listed namespaces and those the namespaceSelector
// matches; the pod's own namespace when neither is given; nil (all) for an
// empty namespaceSelector.
func termNamespaces(pod *corev1.Pod, term corev1.PodAffinityTerm, namespaces map[string]map[string]string) (sets.Set[string], error) {
	if term.NamespaceSelector == nil {
		if len(term.Namespaces) == 0 {
			return sets.New(pod.Namespace), nil
		}
		return sets.New(term.Namespaces...), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
	if err != nil {
		return nil, fmt.Errorf("invalid namespace selector, %w", err)
	}
	if sel.Empty() {
		return nil, nil
	}
	out := sets.New(term.Namespaces...)
	for name, l := range namespaces {
		if sel.Matches(labels.Set(l)) {
			out.Insert(name)
		}
	}
	return out, nil
}

// addInverse registers a placed or running pod's required anti-affinity
// terms: pods their selectors match must keep out of its domains.
func (t *topology) addInverse(pod *corev1.Pod, namespaces map[string]map[string]string) []*counter {
	aff := pod.Spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil {
		return nil
	}
	var out []*counter
	for _, term := range aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		selector, err := selectorWithKeys(term.LabelSelector, pod, term.MatchLabelKeys, term.MismatchLabelKeys)
		if err != nil {
			continue
		}
		ns, err := termNamespaces(pod, term, namespaces)
		if err != nil {
			continue
		}
		out = append(out, t.counterFor(t.inverse, term.TopologyKey, selector, ns))
	}
	return out
}

// allows reports whether a pod with this constraint may land in domain d.
// eligible are the domains (with counts) the global minimum ranges over.
func (c *constraint) allows(d string, minCount int32) bool {
	return c.allowsCount(c.counter.counts[d], minCount)
}

// allowsCount is allows for a domain holding n matching pods.
func (c *constraint) allowsCount(n, minCount int32) bool {
	switch c.kind {
	case kindAntiAffinity:
		return n == 0
	case kindAffinity:
		return n > 0 || (c.counter.total == 0 && c.selfMatch)
	}
	self := int32(0)
	if c.selfMatch {
		self = 1
	}
	return n+self-minCount <= c.maxSkew
}

// minCount is the smallest count over the eligible domains, or 0 when a
// new, empty domain is always possible (hostname) or fewer domains than
// minDomains exist.
func (c *constraint) minCount(eligible []string) int32 {
	if c.counter.key == corev1.LabelHostname || int32(len(eligible)) < c.minDomains || len(eligible) == 0 {
		return 0
	}
	m := int32(math.MaxInt32)
	for _, d := range eligible {
		m = min(m, c.counter.counts[d])
	}
	return m
}

// rank orders allowed domains for pinning a claim: fewest matching pods
// first for spreads (so pods spread), most for affinity, then by name.
func (c *constraint) rank(a, b string) int {
	ca, cb := c.counter.counts[a], c.counter.counts[b]
	if c.kind == kindAffinity {
		ca, cb = -ca, -cb
	}
	return cmp.Or(cmp.Compare(ca, cb), cmp.Compare(a, b))
}
