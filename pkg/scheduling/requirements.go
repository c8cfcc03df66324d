package scheduling

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Requirements is the conjunction of per-key requirements, keyed by label
// key. A key that is not present places no constraint: any value, or no
// label at all. Requirements shares its *Requirement values (they are
// immutable); only Add changes the map.
type Requirements map[string]*Requirement

// NewRequirements returns the conjunction of reqs; a key given twice gets
// the intersection.
func NewRequirements(reqs ...*Requirement) Requirements {
	r := make(Requirements, len(reqs))
	r.Add(reqs...)
	return r
}

// NewLabelRequirements returns In[value] for every label: what a node with
// exactly these labels offers.
func NewLabelRequirements(labels map[string]string) Requirements {
	r := make(Requirements, len(labels))
	for key, value := range labels {
		r[key] = &Requirement{key: key, values: []string{value}, lo: math.MinInt64, hi: math.MaxInt64}
	}
	return r
}

// NewNodeSelectorRequirements converts the requirements of one node
// selector term (which kube-scheduler ANDs).
func NewNodeSelectorRequirements(reqs ...corev1.NodeSelectorRequirement) Requirements {
	r := make(Requirements, len(reqs))
	for i := range reqs {
		r.Add(NewRequirement(reqs[i].Key, reqs[i].Operator, reqs[i].Values...))
	}
	return r
}

// NewNodeSelectorRequirementsWithMinValues converts NodePool or NodeClaim
// requirements.
func NewNodeSelectorRequirementsWithMinValues(reqs ...v1.NodeSelectorRequirementWithMinValues) Requirements {
	r := make(Requirements, len(reqs))
	for i := range reqs {
		r.Add(NewRequirementWithMinValues(reqs[i].Key, reqs[i].Operator, reqs[i].MinValues, reqs[i].Values...))
	}
	return r
}

// Add intersects each of reqs into r in place; nil entries are skipped.
func (r Requirements) Add(reqs ...*Requirement) {
	for _, req := range reqs {
		if req == nil {
			continue
		}
		if existing, ok := r[req.key]; ok {
			r[req.key] = existing.Intersection(req)
		} else {
			r[req.key] = req
		}
	}
}

// Keys returns a new set of the keys r constrains.
func (r Requirements) Keys() sets.Set[string] {
	return sets.KeySet(r)
}

// Has reports whether r constrains key.
func (r Requirements) Has(key string) bool {
	_, ok := r[key]
	return ok
}

// Get returns the requirement on key. For a key r does not constrain it
// returns a new requirement allowing any value or absence (the complement
// of the empty set that allows absence; Operator NotIn, no Values), which is
// what r says about that key.
func (r Requirements) Get(key string) *Requirement {
	if req, ok := r[key]; ok {
		return req
	}
	return &Requirement{key: key, complement: true, absent: true, lo: math.MinInt64, hi: math.MaxInt64}
}

// Intersects returns nil if, for every key both constrain, some node
// satisfies both requirements; otherwise an error naming each such key and
// both sides (r's first). Keys only one side constrains are not checked.
// It does not allocate when it returns nil.
func (r Requirements) Intersects(other Requirements) error {
	small, large := r, other
	if len(small) > len(large) {
		small, large = large, small
	}
	for key, a := range small {
		if b, ok := large[key]; ok && !a.Intersects(b) {
			return r.intersectsError(other)
		}
	}
	return nil
}

func (r Requirements) intersectsError(other Requirements) error {
	e := &intersectsError{}
	for key, a := range r {
		if b, ok := other[key]; ok && !a.Intersects(b) {
			e.keys = append(e.keys, disjoint{key, a, b})
		}
	}
	slices.SortFunc(e.keys, func(x, y disjoint) int { return strings.Compare(x.key, y.key) })
	return e
}

// intersectsError names, one line each, the keys two Requirements do not
// intersect on. The message is built only when read: callers mostly test
// for nil, and formatting it for every instance type a pod does not
// match was a fifth of a large simulation. Holding the requirements is
// safe: they are immutable.
type intersectsError struct{ keys []disjoint }

type disjoint struct {
	key  string
	a, b *Requirement
}

func (e *intersectsError) Error() string {
	var b strings.Builder
	for i, d := range e.keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "key %s: %s does not intersect %s", d.key, d.a, d.b)
	}
	return b.String()
}

// Compatible returns nil if a node described by r can satisfy what other
// (typically a pod's) places on it: every key of other that r constrains
// must intersect, and a key r leaves undefined is allowed only if other's
// requirement on it allows the label to be absent (NotIn, DoesNotExist) or
// the key is in allowUndefined (labels the cloud sets at launch, see
// WellKnownLabels). Otherwise the error names each failing key. It does not
// allocate when it returns nil.
func (r Requirements) Compatible(other Requirements, allowUndefined sets.Set[string]) error {
	for key, want := range other {
		if !compatible(r[key], want, key, allowUndefined) {
			return r.compatibleError(other, allowUndefined)
		}
	}
	return nil
}

func compatible(have, want *Requirement, key string, allowUndefined sets.Set[string]) bool {
	if have != nil {
		return have.Intersects(want)
	}
	return want.absent || allowUndefined.Has(key)
}

func (r Requirements) compatibleError(other Requirements, allowUndefined sets.Set[string]) error {
	var errs []error
	for _, key := range sortedKeys(other) {
		have, want := r[key], other[key]
		switch {
		case compatible(have, want, key, allowUndefined):
		case have == nil:
			errs = append(errs, fmt.Errorf("key %s: %s needs the label, which is undefined", key, want))
		default:
			errs = append(errs, fmt.Errorf("key %s: %s does not intersect %s", key, have, want))
		}
	}
	return errors.Join(errs...)
}

// Matches returns nil if a node with exactly these labels satisfies every
// requirement, with kube-scheduler's node-affinity semantics for one node
// selector term: In needs the label with a listed value, NotIn its absence
// or an unlisted value, Exists its presence, DoesNotExist its absence, and
// Gt, Lt (Gte, Lte) an integer value beyond the bound. Unlike
// kube-scheduler's empty term, which matches no node, empty Requirements
// match every node. It does not allocate when it returns nil.
func (r Requirements) Matches(labels map[string]string) error {
	for key, req := range r {
		if !matches(req, labels, key) {
			return r.matchesError(labels)
		}
	}
	return nil
}

func matches(req *Requirement, labels map[string]string, key string) bool {
	if value, ok := labels[key]; ok {
		return req.Has(value)
	}
	return req.absent
}

func (r Requirements) matchesError(labels map[string]string) error {
	var errs []error
	for _, key := range sortedKeys(r) {
		if matches(r[key], labels, key) {
			continue
		}
		if value, ok := labels[key]; ok {
			errs = append(errs, fmt.Errorf("key %s: value %q does not satisfy %s", key, value, r[key]))
		} else {
			errs = append(errs, fmt.Errorf("key %s: label missing, %s needs it", key, r[key]))
		}
	}
	return errors.Join(errs...)
}

// Labels returns the labels a node launched for r should carry so that it
// satisfies r:
//   - nothing for keys whose requirement allows absence (NotIn,
//     DoesNotExist): leaving the label off satisfies them;
//   - nothing for kubernetes.io/hostname, which the kubelet sets;
//   - for other well-known keys (IsWellKnown), the value only when exactly
//     one is allowed, since the cloud provider chooses among several;
//   - for any other key, Any(): the single value, the smallest of an In
//     set, or a deterministic integer (usually "0") for Exists and bounds.
//
// Unsatisfiable requirements contribute nothing.
func (r Requirements) Labels() map[string]string {
	labels := make(map[string]string, len(r))
	for key, req := range r {
		switch {
		case req.absent, key == v1.LabelHostname:
		case !req.complement && len(req.values) == 0:
		case IsWellKnown(key) && req.Len() != 1:
		default:
			labels[key] = req.Any()
		}
	}
	return labels
}

// NodeSelectorRequirements returns r as API requirements sorted by key,
// exactly: a requirement no single operator names becomes several entries
// for its key (e.g. Gt and Lt, or NotIn and Exists), which
// NewNodeSelectorRequirementsWithMinValues intersects back. MinValues is on
// each key's first entry.
func (r Requirements) NodeSelectorRequirements() []v1.NodeSelectorRequirementWithMinValues {
	out := make([]v1.NodeSelectorRequirementWithMinValues, 0, len(r))
	for _, key := range sortedKeys(r) {
		req := r[key]
		for i, p := range req.parts() {
			out = append(out, req.apiRequirement(p, i == 0))
		}
	}
	return out
}

// String describes r sorted by key, e.g. "kubernetes.io/arch In [amd64],
// topology.kubernetes.io/zone NotIn [a]".
func (r Requirements) String() string {
	var b strings.Builder
	for i, key := range sortedKeys(r) {
		if i > 0 {
			b.WriteString(", ")
		}
		r[key].writeTo(&b)
	}
	return b.String()
}

// Clone returns a new map with the same (immutable) requirements; never
// nil, so the result accepts Add.
func (r Requirements) Clone() Requirements {
	out := make(Requirements, len(r))
	maps.Copy(out, r)
	return out
}

// Intersection returns new Requirements constraining every key of r and
// other, intersecting keys both constrain.
func (r Requirements) Intersection(other Requirements) Requirements {
	out := make(Requirements, max(len(r), len(other)))
	maps.Copy(out, r)
	for _, req := range other {
		out.Add(req)
	}
	return out
}

// HasMinValues reports whether any requirement sets MinValues.
func (r Requirements) HasMinValues() bool {
	for _, req := range r {
		if req.minValues > 0 {
			return true
		}
	}
	return false
}

// MinValuesViolations returns, sorted, the keys whose MinValues exceeds
// counts(key), the number of distinct values the caller's remaining
// options (e.g. instance types) cover; nil when none.
func (r Requirements) MinValuesViolations(counts func(key string) int) []string {
	var keys []string
	for key, req := range r {
		if req.minValues > 0 && counts(key) < req.minValues {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

func sortedKeys(r Requirements) []string {
	return slices.Sorted(maps.Keys(r))
}
