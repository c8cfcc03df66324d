package provisioning

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// podData is what the solver precomputes once per pod.
type podData struct {
	pod       *corev1.Pod
	requests  scheduling.Resources
	hostPorts []scheduling.HostPort
	// variants are the requirement sets to try, in order: for each
	// required node-selector term (in listed order), the term with every
	// preferred term, then relaxing the preferences one at a time, lowest
	// weight first.
	variants []scheduling.Requirements
}

func newPodData(pod *corev1.Pod) *podData {
	return &podData{
		pod:       pod,
		requests:  scheduling.PodRequests(pod),
		hostPorts: scheduling.PodHostPorts(pod),
		variants:  requirementVariants(pod),
	}
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

// preference is one preferred node-affinity term.
type preference struct {
	weight int32
	reqs   scheduling.Requirements
}

// preferredTerms are the pod's preferred node-affinity terms, heaviest
// first (stable for equal weights).
func preferredTerms(pod *corev1.Pod) []preference {
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil {
		return nil
	}
	out := make([]preference, 0, len(aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution))
	for _, p := range aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		out = append(out, preference{weight: p.Weight, reqs: scheduling.NewNodeSelectorRequirements(p.Preference.MatchExpressions...)})
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

func requirementVariants(pod *corev1.Pod) []scheduling.Requirements {
	terms := requiredTerms(pod)
	prefs := preferredTerms(pod)
	if len(prefs) == 0 {
		return terms
	}
	subsets := preferenceSubsets(prefs)
	var variants []scheduling.Requirements
	for _, term := range terms {
		for _, subset := range subsets {
			v := term
			ok := true
			for _, p := range subset {
				if v.Intersects(p.reqs) != nil {
					ok = false
					break
				}
				v = v.Intersection(p.reqs)
			}
			if ok {
				variants = append(variants, v)
			}
		}
	}
	return variants
}

// byResourcesDescending is first-fit-decreasing order: larger pods first,
// so small ones fill the gaps; ties keep the input order.
func byResourcesDescending(a, b *podData) int {
	if c := cmp.Compare(b.requests.CPU, a.requests.CPU); c != 0 {
		return c
	}
	return cmp.Compare(b.requests.Memory, a.requests.Memory)
}
