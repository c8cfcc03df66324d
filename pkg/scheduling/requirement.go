package scheduling

import (
	"math"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// The inclusive-bound operators of the Karpenter v1 API, which
// k8s.io/api does not define.
const (
	opGte corev1.NodeSelectorOperator = "Gte"
	opLte corev1.NodeSelectorOperator = "Lte"
)

// Requirement is the set of values one label key may take on a node, plus
// whether a node without the label satisfies it.
//
// Representation:
//   - In: a finite set of allowed values; the label must be present.
//   - DoesNotExist: the empty finite set, with absence allowed.
//   - NotIn: the complement of a finite set, with absence allowed.
//   - Exists: the complement of the empty set; the label must be present.
//   - Gt, Lt, Gte, Lte: a complement whose values must also parse as
//     integers (as strconv.ParseInt does, so "05" is 5) within inclusive
//     bounds; the label must be present.
//
// Intersections can produce states no single operator names, for example
// Exists ∩ NotIn (present and not excluded) or the unsatisfiable
// In[a] ∩ In[b] (the empty set without absence). A finite set never carries
// bounds: intersecting it with a bounded complement filters its values.
//
// A Requirement is immutable; every method returns new values, so one may be
// shared freely.
type Requirement struct {
	key string
	// values is sorted and duplicate-free: the allowed values, or the
	// excluded ones when complement is set. Nil when empty.
	values     []string
	complement bool
	// absent reports whether a node lacking the label satisfies the
	// requirement; kube-scheduler decides absence per operator, so it is
	// tracked apart from the value set.
	absent bool
	// numeric limits a complement to integers in [lo, hi]. When numeric is
	// unset, lo and hi are math.MinInt64 and math.MaxInt64.
	numeric   bool
	lo, hi    int64
	minValues int
}

// NewRequirement returns the requirement that op and values place on key.
// The operators are In, NotIn, Exists, DoesNotExist, Gt, Lt, "Gte" and
// "Lte". Input the API would reject yields a requirement nothing satisfies
// (an unknown operator, In without values, a bound that is not exactly one
// integer), so a malformed selector never matches by accident; values of
// Exists and DoesNotExist are ignored.
func NewRequirement(key string, op corev1.NodeSelectorOperator, values ...string) *Requirement {
	return NewRequirementWithMinValues(key, op, nil, values...)
}

// NewRequirementWithMinValues is NewRequirement with the minimum number of
// distinct values a launch must keep open; nil or less than 1 means none.
func NewRequirementWithMinValues(key string, op corev1.NodeSelectorOperator, minValues *int, values ...string) *Requirement {
	r := &Requirement{key: key, lo: math.MinInt64, hi: math.MaxInt64}
	if minValues != nil && *minValues > 0 {
		r.minValues = *minValues
	}
	switch op {
	case corev1.NodeSelectorOpIn:
		r.values = sortedSet(values)
	case corev1.NodeSelectorOpNotIn:
		r.complement, r.absent = true, true
		r.values = sortedSet(values)
	case corev1.NodeSelectorOpExists:
		r.complement = true
	case corev1.NodeSelectorOpDoesNotExist:
		r.absent = true
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt, opGte, opLte:
		if len(values) != 1 {
			return r
		}
		n, ok := parseInt64(values[0])
		if !ok {
			return r
		}
		switch op {
		case corev1.NodeSelectorOpGt:
			if n == math.MaxInt64 {
				return r
			}
			r.lo = n + 1
		case corev1.NodeSelectorOpLt:
			if n == math.MinInt64 {
				return r
			}
			r.hi = n - 1
		case opGte:
			r.lo = n
		default:
			r.hi = n
		}
		r.complement, r.numeric = true, true
	}
	return r
}

// sortedSet returns values sorted and deduplicated in a new slice, nil when
// empty so that equal requirements compare equal.
func sortedSet(values []string) []string {
	if len(values) == 0 {
		return nil
	}
	out := slices.Clone(values)
	slices.Sort(out)
	return slices.Compact(out)
}

// Key returns the label key.
func (r *Requirement) Key() string { return r.key }

// AllowsAbsent reports whether a node without the label satisfies r.
func (r *Requirement) AllowsAbsent() bool { return r.absent }

// MinValues returns the minimum number of distinct values a launch must
// keep open for the key, 0 when unset.
func (r *Requirement) MinValues() int { return r.minValues }

// WithMinValues is r with minValues n (less than 1: none).
func (r *Requirement) WithMinValues(n int) *Requirement {
	out := *r
	out.minValues = max(n, 0)
	return &out
}

// Operator returns the canonical operator: the one NodeSelectorRequirement
// uses. States no single operator names report the closest one, as
// Karpenter does: an empty set reports DoesNotExist even when it forbids
// absence too (unsatisfiable; r.Intersects(r) tells them apart), Exists ∩
// NotIn reports NotIn, and a bounded complement reports Gt (lower bound
// above 0), "Gte" (lower bound 0 or below, keeping the API value
// non-negative), or Lt when only an upper bound is set.
func (r *Requirement) Operator() corev1.NodeSelectorOperator {
	switch {
	case !r.complement && len(r.values) > 0:
		return corev1.NodeSelectorOpIn
	case !r.complement:
		return corev1.NodeSelectorOpDoesNotExist
	case r.numeric:
		op, _ := r.principalBound()
		return op
	case r.absent || len(r.values) > 0:
		return corev1.NodeSelectorOpNotIn
	default:
		return corev1.NodeSelectorOpExists
	}
}

// principalBound returns the single bound operator and value that stand for
// a numeric requirement: the lower bound if set, else the upper one.
func (r *Requirement) principalBound() (corev1.NodeSelectorOperator, int64) {
	switch {
	case r.lo != math.MinInt64 || r.hi == math.MaxInt64:
		return lowerBound(r.lo)
	default:
		return corev1.NodeSelectorOpLt, r.hi + 1
	}
}

// lowerBound expresses "at least lo" as Gt lo-1 while that stays
// non-negative (the API only accepts non-negative bounds), else as Gte lo.
func lowerBound(lo int64) (corev1.NodeSelectorOperator, int64) {
	if lo >= 1 {
		return corev1.NodeSelectorOpGt, lo - 1
	}
	return opGte, lo
}

// Values returns, sorted, the values of the canonical operator: the allowed
// values for In, the excluded ones for NotIn, the single integer for Gt, Lt
// and Gte, none for Exists and DoesNotExist. The slice is the caller's.
func (r *Requirement) Values() []string {
	if r.numeric {
		_, n := r.principalBound()
		return []string{strconv.FormatInt(n, 10)}
	}
	return slices.Clone(r.values)
}

// Len returns the number of allowed values: math.MaxInt for a complement
// (bounded ones included: "5", "05", "005" all parse as 5), 0 for
// DoesNotExist and unsatisfiable requirements.
func (r *Requirement) Len() int {
	if r.complement {
		return math.MaxInt
	}
	return len(r.values)
}

// Has reports whether a node whose label has value satisfies r.
func (r *Requirement) Has(value string) bool {
	_, found := slices.BinarySearch(r.values, value)
	if !r.complement {
		return found
	}
	if found {
		return false
	}
	if r.numeric {
		n, ok := parseInt64(value)
		return ok && n >= r.lo && n <= r.hi
	}
	return true
}

// Any returns an allowed value, deterministically: the smallest for a
// finite set, "" when none is allowed. For a complement it is the integer
// nearest 0 within the bounds (0 for Exists and NotIn) that is not
// excluded, searching upwards first; should every integer in the bounds be
// excluded, a zero-padded form ("05") that parses to the same number.
func (r *Requirement) Any() string {
	if !r.complement {
		if len(r.values) == 0 {
			return ""
		}
		return r.values[0]
	}
	start := min(max(0, r.lo), r.hi)
	for n := start; ; n++ {
		if s := strconv.FormatInt(n, 10); !r.excludes(s) {
			return s
		}
		if n == r.hi {
			break
		}
	}
	if start > r.lo {
		for n := start - 1; ; n-- {
			if s := strconv.FormatInt(n, 10); !r.excludes(s) {
				return s
			}
			if n == r.lo {
				break
			}
		}
	}
	// Only finitely many strings are excluded, so padding ends.
	digits := strconv.FormatInt(start, 10)
	sign := ""
	if start < 0 {
		sign, digits = "-", digits[1:]
	}
	for {
		digits = "0" + digits
		if s := sign + digits; !r.excludes(s) {
			return s
		}
	}
}

// excludes reports whether value is in a complement's excluded set.
func (r *Requirement) excludes(value string) bool {
	_, found := slices.BinarySearch(r.values, value)
	return found
}
