package provisioning

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// podData is what the solver precomputes once per pod.
type podData struct {
	pod *corev1.Pod
	// requests and shape are the variant's being tried, and once placed
	// the variant's that placed it; before, the first variant's (or the
	// pod's own without variants), by which pods are sorted.
	// tier orders the pod before any size: holding virtual pods, then
	// real ones, then yielding virtual ones (Input.Holding, Input.Yielding).
	tier     int8
	requests scheduling.Resources
	// shape numbers the pod's requests: pods with the same requests have
	// the same shape (see numberShapes).
	shape int32
	// term is the index of the required term the pod was placed by.
	term int
	// byTerm: its variants' requests are its terms' (Input.TermRequests).
	byTerm    bool
	hostPorts []scheduling.HostPort
	// variants are what to try, in order: for each required node-selector
	// term (in listed order), the term with every preference, then with
	// fewer (see preferenceSubsets).
	variants []variant
	// matched are the counters whose selector matches the pod: placing it
	// changes their counts. inverse are the anti-affinity terms of other
	// pods whose selector matches it.
	matched []*counter
	inverse []*counter
	// owned are the pod's own required anti-affinity terms, recorded as
	// owners once it is placed.
	owned []*counter
	// terms are the pod's required node-affinity terms (with its
	// nodeSelector): a spread's eligible domains are those any term allows.
	terms []scheduling.Requirements
	// group is the key of the pod's atomic group (gang.KeyOf), or "".
	group string
}

// variant is one way to place a pod: node requirements, the topology
// constraints that must hold and what the pod requests this way.
type variant struct {
	reqs        scheduling.Requirements
	constraints []*constraint
	// term is the index of the required term the variant comes from.
	term int
	// requests are the term's (Input.TermRequests), shape their number.
	requests scheduling.Resources
	shape    int32
}

// podSpec is what a pod's spec alone decides, worked out for every pod
// of a solve at once.
type podSpec struct {
	requests  scheduling.Resources
	hostPorts []scheduling.HostPort
	terms     []scheduling.Requirements
	// termRequests are the requests by term; nil: requests for each.
	termRequests []scheduling.Resources
}

func specOf(pod *corev1.Pod) podSpec {
	return podSpec{requests: scheduling.PodRequests(pod), hostPorts: scheduling.PodHostPorts(pod), terms: requiredTerms(pod)}
}

// podSpecs are the pods' specs, on workers goroutines (0: GOMAXPROCS):
// summing containers' requests is a good part of reading 100,000 pods,
// and it depends on nothing else.
func podSpecs(pods []*corev1.Pod, termRequests map[*corev1.Pod][]scheduling.Resources, workers int) []podSpec {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]podSpec, len(pods))
	inChunks(len(pods), workers, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = specOf(pods[i])
			if tr := termRequests[pods[i]]; len(tr) > 0 && len(tr) == len(out[i].terms) {
				out[i].termRequests = tr
			}
		}
	})
	return out
}

// newPodData precomputes a pod from its spec and the solve's topology.
// volumeReqs (from its volumes' topology) are AND'd into every term.
func newPodData(pod *corev1.Pod, spec podSpec, topo *topology, namespaces map[string]map[string]string, volumeReqs scheduling.Requirements, opts Options) (*podData, error) {
	hard, soft, err := topo.constraints(pod, namespaces)
	if err != nil {
		return nil, err
	}
	p := &podData{
		pod:       pod,
		requests:  spec.requests,
		hostPorts: spec.hostPorts,
		variants:  variants(pod, spec, volumeReqs, hard, soft, opts),
		owned:     topo.addInverse(pod, namespaces),
		terms:     spec.terms,
		byTerm:    spec.termRequests != nil,
		group:     gang.KeyOf(pod),
	}
	if len(p.variants) > 0 {
		p.requests = p.variants[0].requests
	}
	return p, nil
}

// requiredTerms are the pod's node-selector terms, each AND'd with its
// nodeSelector. A pod without required affinity has one term: the
// nodeSelector alone.
func requiredTerms(pod *corev1.Pod) []scheduling.Requirements {
	selector := scheduling.NewLabelRequirements(pod.Spec.NodeSelector)
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return []scheduling.Requirements{selector}
	}
	var terms []scheduling.Requirements
	for _, term := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		reqs := scheduling.NewNodeSelectorRequirements(term.MatchExpressions...)
		reqs.Add(selectorRequirements(selector)...)
		terms = append(terms, reqs)
	}
	return terms
}

func selectorRequirements(r scheduling.Requirements) []*scheduling.Requirement {
	out := make([]*scheduling.Requirement, 0, len(r))
	for _, req := range r {
		out = append(out, req)
	}
	return out
}

// preference is one soft constraint: a preferred node-affinity term
// (reqs) or a preferred pod (anti-)affinity term or ScheduleAnyway spread
// (topo).
type preference struct {
	weight int32
	reqs   scheduling.Requirements
	topo   *constraint
}

// preferences are the pod's soft constraints, heaviest first (stable for
// equal weights).
func preferences(pod *corev1.Pod, soft []*constraint) []preference {
	var out []preference
	if aff := pod.Spec.Affinity; aff != nil && aff.NodeAffinity != nil {
		for _, p := range aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			out = append(out, preference{weight: p.Weight, reqs: scheduling.NewNodeSelectorRequirements(p.Preference.MatchExpressions...)})
		}
	}
	for _, c := range soft {
		out = append(out, preference{weight: c.weight, topo: c})
	}
	slices.SortStableFunc(out, func(a, b preference) int { return cmp.Compare(b.weight, a.weight) })
	return out
}

// maxEnumeratedPreferences bounds the preference subsets tried: 2^4 = 16
// variants per required term at most; beyond it preferences are dropped
// lightest first, one at a time.
const maxEnumeratedPreferences = 4

// preferenceSubsets orders the sets of preferences to honour: by total
// weight, heaviest first, so the lightest preferences are given up first
// and a heavy one is given up only when no set keeping it works.
func preferenceSubsets(prefs []preference) [][]preference {
	if len(prefs) > maxEnumeratedPreferences {
		out := make([][]preference, 0, len(prefs)+1)
		for k := len(prefs); k >= 0; k-- {
			out = append(out, prefs[:k])
		}
		return out
	}
	type subset struct {
		prefs  []preference
		weight int32
	}
	subsets := make([]subset, 0, 1<<len(prefs))
	for mask := (1 << len(prefs)) - 1; mask >= 0; mask-- {
		var s subset
		for i, p := range prefs {
			if mask&(1<<i) != 0 {
				s.prefs = append(s.prefs, p)
				s.weight += p.weight
			}
		}
		subsets = append(subsets, s)
	}
	slices.SortStableFunc(subsets, func(a, b subset) int {
		return cmp.Or(cmp.Compare(b.weight, a.weight), cmp.Compare(len(b.prefs), len(a.prefs)))
	})
	out := make([][]preference, len(subsets))
	for i, s := range subsets {
		out[i] = s.prefs
	}
	return out
}

func variants(pod *corev1.Pod, spec podSpec, volumeReqs scheduling.Requirements, hard, soft []*constraint, opts Options) []variant {
	prefs := preferences(pod, soft)
	if opts.PreferencePolicy == PreferencePolicyIgnore {
		prefs = nil
	}
	subsets := preferenceSubsets(prefs)
	if opts.KeepPreferences {
		// Every preference, none given up: the heaviest subset.
		subsets = subsets[:1]
	}
	var out []variant
	for ti, term := range spec.terms {
		requests := spec.requests
		if spec.termRequests != nil {
			requests = spec.termRequests[ti]
		}
		if len(volumeReqs) > 0 {
			if term.Intersects(volumeReqs) != nil {
				continue
			}
			term = term.Intersection(volumeReqs)
		}
		for _, subset := range subsets {
			v := variant{reqs: term, constraints: hard, term: ti, requests: requests}
			ok := true
			for _, p := range subset {
				if p.topo != nil {
					v.constraints = append(slices.Clip(v.constraints), p.topo)
					continue
				}
				if v.reqs.Intersects(p.reqs) != nil {
					ok = false
					break
				}
				v.reqs = v.reqs.Intersection(p.reqs)
			}
			if ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// byResourcesDescending is first-fit-decreasing order: larger pods first,
// so small ones fill the gaps. Size is cores plus GiB/2 (instance types'
// usual memory per core), so CPU-heavy and memory-heavy pods interleave
// and nodes stay balanced. Among pods of one size, those with more
// required anti-affinity terms go first: each may need a node of its own,
// and opened before the others of its size, its node is filled by them
// rather than opened late around it alone. Ties keep the input order.
// Before all of that comes the pod's tier (holding, real, yielding).
func byResourcesDescending(a, b *podData) int {
	return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(weight(b.requests.CPU, b.requests.Memory), weight(a.requests.CPU, a.requests.Memory)),
		cmp.Compare(len(b.owned), len(a.owned)))
}

// numberShapes gives equal requests the same shape number: each pod's,
// and each of its variants'.
func numberShapes(pods []*podData) {
	type key struct {
		cpu, memory, storage, pods int64
		extended                   string
	}
	shapes := map[key]int32{}
	number := func(r scheduling.Resources) int32 {
		k := key{cpu: r.CPU, memory: r.Memory, storage: r.Storage, pods: r.Pods}
		if len(r.Extended) > 0 {
			k.extended = fmt.Sprint(r.Extended)
		}
		n, ok := shapes[k]
		if !ok {
			n = int32(len(shapes))
			shapes[k] = n
		}
		return n
	}
	for _, p := range pods {
		p.shape = number(p.requests)
		for i := range p.variants {
			if p.byTerm {
				p.variants[i].shape = number(p.variants[i].requests)
			} else {
				p.variants[i].shape = p.shape
			}
		}
	}
}
