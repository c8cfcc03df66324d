package scheduling

import (
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// maxShownValues bounds the values String prints per requirement, so that an
// error about a NodePool allowing 700 instance types stays readable.
const maxShownValues = 5

// part is one API requirement in the exact decomposition of a Requirement.
type part struct {
	op     corev1.NodeSelectorOperator
	values []string
}

// parts returns API requirements whose conjunction is exactly r, the
// canonical one (Operator, Values) first. values may alias r.values.
func (r *Requirement) parts() []part {
	switch {
	case !r.complement && len(r.values) > 0:
		return []part{{corev1.NodeSelectorOpIn, r.values}}
	case !r.complement && r.absent:
		return []part{{corev1.NodeSelectorOpDoesNotExist, nil}}
	case !r.complement:
		// Unsatisfiable: the label must be both present and absent.
		return []part{{corev1.NodeSelectorOpDoesNotExist, nil}, {corev1.NodeSelectorOpExists, nil}}
	case r.numeric:
		var ps []part
		if r.lo != math.MinInt64 || r.hi == math.MaxInt64 {
			op, n := lowerBound(r.lo)
			ps = append(ps, part{op, []string{strconv.FormatInt(n, 10)}})
		}
		if r.hi != math.MaxInt64 {
			ps = append(ps, part{corev1.NodeSelectorOpLt, []string{strconv.FormatInt(r.hi+1, 10)}})
		}
		if len(r.values) > 0 {
			ps = append(ps, part{corev1.NodeSelectorOpNotIn, r.values})
		}
		return ps
	case r.absent:
		return []part{{corev1.NodeSelectorOpNotIn, r.values}}
	case len(r.values) > 0:
		return []part{{corev1.NodeSelectorOpNotIn, r.values}, {corev1.NodeSelectorOpExists, nil}}
	default:
		return []part{{corev1.NodeSelectorOpExists, nil}}
	}
}

// NodeSelectorRequirement returns r as one API requirement: Operator,
// Values and MinValues. Every requirement built from a single operator
// round-trips (Gte n becomes Gt n-1 and Lte n becomes Lt n+1, keeping Gte
// only where Gt would need a negative value). States no single operator
// names lose the other half, as Operator describes; use
// Requirements.NodeSelectorRequirements for an exact conversion.
func (r *Requirement) NodeSelectorRequirement() v1.NodeSelectorRequirementWithMinValues {
	return r.apiRequirement(r.parts()[0], true)
}

func (r *Requirement) apiRequirement(p part, withMinValues bool) v1.NodeSelectorRequirementWithMinValues {
	out := v1.NodeSelectorRequirementWithMinValues{Key: r.key, Operator: p.op, Values: slices.Clone(p.values)}
	if withMinValues && r.minValues > 0 {
		minValues := r.minValues
		out.MinValues = &minValues
	}
	return out
}

// String describes r exactly, e.g. "cpu Gt 4, cpu Lt 65" or
// "zone In [a b] minValues 2"; value lists longer than five are shortened.
func (r *Requirement) String() string {
	var b strings.Builder
	r.writeTo(&b)
	return b.String()
}

func (r *Requirement) writeTo(b *strings.Builder) {
	for i, p := range r.parts() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.key)
		b.WriteByte(' ')
		b.WriteString(string(p.op))
		switch p.op {
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			b.WriteString(" [")
			for j, v := range p.values[:min(len(p.values), maxShownValues)] {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(v)
			}
			if len(p.values) > maxShownValues {
				b.WriteString(" and ")
				b.WriteString(strconv.Itoa(len(p.values) - maxShownValues))
				b.WriteString(" others")
			}
			b.WriteByte(']')
		default:
			b.WriteByte(' ')
			b.WriteString(p.values[0])
		}
	}
	if r.minValues > 0 {
		b.WriteString(" minValues ")
		b.WriteString(strconv.Itoa(r.minValues))
	}
}
