package disruption

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// ReturnToPreferredTerm moves a node whose pods run on a later one of
// their ordered required node-affinity terms (an llmaz flavor after the
// first, or any pod's ordered terms, seed 001) back to an earlier term
// once that is launchable again and has been for the NodePool's
// return-to-preferred-after. It runs only where the NodePool's
// capstan.dev/return-to-preferred is Enabled: the earlier term may cost
// more. For that reason it counts against the Drifted budget, whatever
// the replacement costs: the node is replaced for what its pods prefer,
// not to save. Failed returns back off as ReturnToPreferred's do; every
// blocker holds and the replacement is up before the node drains.
type ReturnToPreferredTerm struct{}

// Name implements Method.
func (ReturnToPreferredTerm) Name() string { return "ReturnToPreferredTerm" }

// Reason implements Method.
func (ReturnToPreferredTerm) Reason() v1.DisruptionReason { return v1.DisruptionReasonDrifted }

// Returns implements Returning: a node returns from a later term.
func (ReturnToPreferredTerm) Returns() Return { return ReturnLaterTerm }

// Compute implements Method.
func (m ReturnToPreferredTerm) Compute(env Env) Outcome {
	return returns(env, m, func(c Candidate) bool { return len(LaterTerms(c.Node, c.Pods)) > 0 },
		func(p ReturnPolicy) bool { return p.Terms }, termReplacement)
}

// TermFallback is a pod on a later one of its ordered terms.
type TermFallback struct {
	Pod *corev1.Pod
	// Rank is the index of the first term node matches; Of how many
	// terms the pod has.
	Rank, Of int
	terms    []scheduling.Requirements
}

// LaterTerms are the pods on node that have two or more required
// node-affinity terms (which the solver tries in order) and run on a
// term after their first.
func LaterTerms(node *corev1.Node, pods []*corev1.Pod) []TermFallback {
	var out []TermFallback
	for _, p := range pods {
		terms := orderedTerms(p)
		for i, t := range terms {
			if t.Matches(node.Labels) != nil {
				continue
			}
			if i > 0 {
				out = append(out, TermFallback{Pod: p, Rank: i, Of: len(terms), terms: terms})
			}
			break
		}
	}
	return out
}

// orderedTerms are p's required node-affinity terms, when it has more
// than one.
func orderedTerms(p *corev1.Pod) []scheduling.Requirements {
	aff := p.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	terms := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) < 2 {
		return nil
	}
	out := make([]scheduling.Requirements, len(terms))
	for i, t := range terms {
		out[i] = scheduling.NewNodeSelectorRequirements(t.MatchExpressions...)
	}
	return out
}

// termReplacement is c's replacement on an earlier term for each of its
// pods on a later one, or why there is none yet and when that may change
// by time alone.
func termReplacement(env Env, c Candidate, policy ReturnPolicy, pool poolBackoff) (*provisioning.NodeClaim, string, time.Time) {
	if why, at := backingOff(c, pool, "an earlier term", env.Now); why != "" {
		return nil, why, at
	}
	sim := env.SimulateKeepingPreferences([]Candidate{c})
	if len(sim.Unplaced) > 0 {
		u := sim.Unplaced[0]
		return nil, fmt.Sprintf("not all pods would schedule, pod %s/%s: %s", u.Pod.Namespace, u.Pod.Name, u.Message), time.Time{}
	}
	if len(sim.Replacements) != 1 {
		return nil, fmt.Sprintf("its pods need %d new nodes, not one", len(sim.Replacements)), time.Time{}
	}
	r := sim.Replacements[0]
	for _, f := range LaterTerms(c.Node, c.Pods) {
		if !holds(r, f.Pod) {
			return nil, fmt.Sprintf("pod %s/%s would not move to the new node", f.Pod.Namespace, f.Pod.Name), time.Time{}
		}
		r = earlier(r, f)
		if r == nil {
			return nil, fmt.Sprintf("no earlier term of pod %s/%s is launchable (it runs on term %d of %d)", f.Pod.Namespace, f.Pod.Name, f.Rank+1, f.Of), time.Time{}
		}
	}
	ready, wake := settled(r, env.Unavailable, policy.After, env.Now)
	if ready == nil {
		return nil, fmt.Sprintf("an earlier term is available again, but not for %s yet: returning at %s", policy.After, wake.UTC().Format(time.RFC3339)), wake
	}
	return ready, "", time.Time{}
}

// holds reports whether the planned claim r carries pod p (a copy of it,
// as the simulation solves copies).
func holds(r *provisioning.NodeClaim, p *corev1.Pod) bool {
	for _, q := range r.Pods {
		if q.Namespace == p.Namespace && q.Name == p.Name {
			return true
		}
	}
	return false
}

// earlier is r narrowed to the first of f's terms before the one its pod
// runs on that r can still launch under; nil when none can.
func earlier(r *provisioning.NodeClaim, f TermFallback) *provisioning.NodeClaim {
	for _, term := range f.terms[:f.Rank] {
		if n := narrow(r, term); n != nil {
			return n
		}
	}
	return nil
}

// narrow is a copy of r that satisfies reqs too, keeping the instance
// types that still have an available offering under them; nil when r
// cannot (a label it sets differently, or no instance type left).
func narrow(r *provisioning.NodeClaim, reqs scheduling.Requirements) *provisioning.NodeClaim {
	if r.Requirements.Compatible(reqs, scheduling.WellKnownLabels()) != nil {
		return nil
	}
	out := *r
	out.Requirements = r.Requirements.Clone()
	for _, req := range reqs {
		out.Requirements.Add(req)
	}
	if ct := out.Requirements.Get(v1.CapacityTypeLabelKey); ct.Len() == 1 {
		out.CapacityType = ct.Any()
	}
	out.InstanceTypes = nil
	for _, it := range r.InstanceTypes {
		if _, ok := WorstPrice(it, out.Requirements); ok && it.Requirements.Intersects(out.Requirements) == nil {
			out.InstanceTypes = append(out.InstanceTypes, it)
		}
	}
	if len(out.InstanceTypes) == 0 {
		return nil
	}
	names := make([]string, len(out.InstanceTypes))
	for i, it := range out.InstanceTypes {
		names[i] = it.Name
	}
	out.Requirements.Add(scheduling.NewRequirement(v1.LabelInstanceType, corev1.NodeSelectorOpIn, names...))
	return &out
}

// Backoff implements BackingOff, as for ReturnToPreferred.
func (ReturnToPreferredTerm) Backoff(c Candidate, now time.Time) map[string]string {
	return ReturnBackoff(c.NodeClaim, c.NodePool, now)
}
