package scheduling

import (
	"math"
	"slices"
)

// Intersection returns the requirement satisfied exactly by the nodes that
// satisfy both r and other, keeping r's key. MinValues is the larger of
// the two. Neither input changes.
func (r *Requirement) Intersection(other *Requirement) *Requirement {
	out := &Requirement{
		key:       r.key,
		absent:    r.absent && other.absent,
		minValues: max(r.minValues, other.minValues),
		lo:        math.MinInt64,
		hi:        math.MaxInt64,
	}
	switch {
	case r.complement && other.complement:
		lo, hi := max(r.lo, other.lo), min(r.hi, other.hi)
		if lo > hi {
			// No integer fits: only absence, if both allow it, remains.
			return out
		}
		out.complement = true
		out.numeric = r.numeric || other.numeric
		out.lo, out.hi = lo, hi
		out.values = unionSorted(r.values, other.values)
		if out.numeric {
			// Excluding what the bounds already reject is redundant; drop
			// it so that equal sets have one representation.
			out.values = slices.DeleteFunc(out.values, func(v string) bool {
				n, ok := parseInt64(v)
				return !ok || n < lo || n > hi
			})
		}
	case r.complement:
		out.values = filterSorted(other.values, r)
	case other.complement:
		out.values = filterSorted(r.values, other)
	default:
		out.values = intersectSorted(r.values, other.values)
	}
	if len(out.values) == 0 {
		out.values = nil
	}
	return out
}

// Intersects reports whether some node satisfies both r and other: a value
// both allow, or absence when both allow it. It does not allocate.
func (r *Requirement) Intersects(other *Requirement) bool {
	if r.absent && other.absent {
		return true
	}
	switch {
	case r.complement && other.complement:
		// A complement excludes finitely many strings but every integer has
		// infinitely many spellings ("5", "05", ...), so only the bounds
		// can empty it.
		return max(r.lo, other.lo) <= min(r.hi, other.hi)
	case r.complement:
		return anyHas(other.values, r)
	case other.complement:
		return anyHas(r.values, other)
	default:
		return sortedIntersects(r.values, other.values)
	}
}

// anyHas reports whether c allows one of values.
func anyHas(values []string, c *Requirement) bool {
	for _, v := range values {
		if c.Has(v) {
			return true
		}
	}
	return false
}

// filterSorted returns the values c allows, in order, in a new slice.
func filterSorted(values []string, c *Requirement) []string {
	var out []string
	for _, v := range values {
		if c.Has(v) {
			out = append(out, v)
		}
	}
	return out
}

// sortedIntersects reports whether two sorted sets share a value, searching
// the larger for each value of the smaller: instance-type sets run to
// hundreds while a pod usually names a few.
func sortedIntersects(a, b []string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	for _, v := range a {
		if _, found := slices.BinarySearch(b, v); found {
			return true
		}
	}
	return false
}

// intersectSorted returns the common values of two sorted sets, sorted.
func intersectSorted(a, b []string) []string {
	if len(a) > len(b) {
		a, b = b, a
	}
	var out []string
	for _, v := range a {
		if _, found := slices.BinarySearch(b, v); found {
			out = append(out, v)
		}
	}
	return out
}

// unionSorted merges two sorted sets into a new sorted set.
func unionSorted(a, b []string) []string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}
