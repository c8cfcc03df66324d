package scheduling

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

const (
	in     = corev1.NodeSelectorOpIn
	notIn  = corev1.NodeSelectorOpNotIn
	exists = corev1.NodeSelectorOpExists
	dne    = corev1.NodeSelectorOpDoesNotExist
	gt     = corev1.NodeSelectorOpGt
	lt     = corev1.NodeSelectorOpLt
)

// nonEmpty reports whether some node satisfies r: a value, or absence.
func nonEmpty(r *Requirement) bool { return r.Len() > 0 || allowsAbsence(r) }

func TestIntersection(t *testing.T) {
	cases := []struct {
		name         string
		a, b         *Requirement
		want         summary
		wantString   string
		has, hasNot  []string
		wantNonEmpty bool
	}{
		{name: "In∩In", a: NewRequirement("k", in, "a", "b"), b: NewRequirement("k", in, "b", "c"),
			want: summary{Op: in, Values: []string{"b"}, Len: 1, Any: "b"}, wantString: "k In [b]",
			has: []string{"b"}, hasNot: []string{"a", "c"}, wantNonEmpty: true},
		{name: "In∩In disjoint is unsatisfiable", a: NewRequirement("k", in, "a", "b"), b: NewRequirement("k", in, "c"),
			want: summary{Op: dne}, wantString: "k DoesNotExist, k Exists", hasNot: []string{"a", "c"}},
		{name: "In∩NotIn", a: NewRequirement("k", in, "a", "b"), b: NewRequirement("k", notIn, "a"),
			want: summary{Op: in, Values: []string{"b"}, Len: 1, Any: "b"}, wantString: "k In [b]",
			has: []string{"b"}, hasNot: []string{"a"}, wantNonEmpty: true},
		{name: "In∩Exists", a: NewRequirement("k", in, "a"), b: NewRequirement("k", exists),
			want: summary{Op: in, Values: []string{"a"}, Len: 1, Any: "a"}, wantString: "k In [a]", wantNonEmpty: true},
		{name: "NotIn∩NotIn", a: NewRequirement("k", notIn, "a"), b: NewRequirement("k", notIn, "b", "a"),
			want:       summary{Op: notIn, Values: []string{"a", "b"}, Len: maxInt, Any: "0", Absent: true},
			wantString: "k NotIn [a b]", has: []string{"c"}, hasNot: []string{"a", "b"}, wantNonEmpty: true},
		{name: "Exists∩DoesNotExist is unsatisfiable", a: NewRequirement("k", exists), b: NewRequirement("k", dne),
			want: summary{Op: dne}, wantString: "k DoesNotExist, k Exists", hasNot: []string{"a"}},
		{name: "Exists∩NotIn needs the label", a: NewRequirement("k", exists), b: NewRequirement("k", notIn, "a"),
			want:       summary{Op: notIn, Values: []string{"a"}, Len: maxInt, Any: "0"},
			wantString: "k NotIn [a], k Exists", has: []string{"b"}, hasNot: []string{"a"}, wantNonEmpty: true},
		{name: "NotIn∩DoesNotExist is absence", a: NewRequirement("k", notIn, "a"), b: NewRequirement("k", dne),
			want: summary{Op: dne, Absent: true}, wantString: "k DoesNotExist", hasNot: []string{"a", "b"}, wantNonEmpty: true},
		{name: "Gt∩Lt range", a: NewRequirement("k", gt, "2"), b: NewRequirement("k", lt, "5"),
			want:       summary{Op: gt, Values: []string{"2"}, Len: maxInt, Any: "3"},
			wantString: "k Gt 2, k Lt 5", has: []string{"3", "4", "04"}, hasNot: []string{"2", "5", "a"}, wantNonEmpty: true},
		{name: "Gt∩Lt without an integer between", a: NewRequirement("k", gt, "4"), b: NewRequirement("k", lt, "5"),
			want: summary{Op: dne}, wantString: "k DoesNotExist, k Exists", hasNot: []string{"4", "5"}},
		{name: "Gte∩Lte a single integer", a: NewRequirement("k", opGte, "5"), b: NewRequirement("k", opLte, "5"),
			want:       summary{Op: gt, Values: []string{"4"}, Len: maxInt, Any: "5"},
			wantString: "k Gt 4, k Lt 6", has: []string{"5", "005"}, hasNot: []string{"4", "6"}, wantNonEmpty: true},
		{name: "Lt∩Lt keeps the tighter bound", a: NewRequirement("k", lt, "5"), b: NewRequirement("k", lt, "3"),
			want: summary{Op: lt, Values: []string{"3"}, Len: maxInt, Any: "0"}, wantString: "k Lt 3", wantNonEmpty: true},
		{name: "In∩Gt filters numerically", a: NewRequirement("k", in, "1", "5", "10", "a", "05"), b: NewRequirement("k", gt, "4"),
			want:       summary{Op: in, Values: []string{"05", "10", "5"}, Len: 3, Any: "05"},
			wantString: "k In [05 10 5]", has: []string{"5", "10"}, hasNot: []string{"1", "a", "6"}, wantNonEmpty: true},
		{name: "In∩Lt without a number", a: NewRequirement("k", in, "a", "b"), b: NewRequirement("k", lt, "4"),
			want: summary{Op: dne}, wantString: "k DoesNotExist, k Exists"},
		{name: "Gt∩NotIn drops exclusions the bound rejects", a: NewRequirement("k", gt, "2"), b: NewRequirement("k", notIn, "1", "3", "a"),
			want:       summary{Op: gt, Values: []string{"2"}, Len: maxInt, Any: "4"},
			wantString: "k Gt 2, k NotIn [3]", has: []string{"4", "03"}, hasNot: []string{"3", "a", "1"}, wantNonEmpty: true},
		{name: "MinValues is the larger", a: NewRequirementWithMinValues("k", in, intPtr(2), "a", "b", "c"), b: NewRequirementWithMinValues("k", in, intPtr(1), "a", "b"),
			want: summary{Op: in, Values: []string{"a", "b"}, Len: 2, Any: "a", MinValues: 2}, wantString: "k In [a b] minValues 2", wantNonEmpty: true},
		{name: "MinValues carried from either side", a: NewRequirement("k", exists), b: NewRequirementWithMinValues("k", notIn, intPtr(3), "a"),
			want:       summary{Op: notIn, Values: []string{"a"}, Len: maxInt, Any: "0", MinValues: 3},
			wantString: "k NotIn [a], k Exists minValues 3", wantNonEmpty: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			aBefore, bBefore := tc.a.String(), tc.b.String()
			for _, got := range []*Requirement{tc.a.Intersection(tc.b), tc.b.Intersection(tc.a)} {
				if diff := cmp.Diff(tc.want, summarize(got)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				if s := got.String(); s != tc.wantString {
					t.Errorf("String() = %q, want %q", s, tc.wantString)
				}
				for _, v := range tc.has {
					if !got.Has(v) {
						t.Errorf("Has(%q) = false", v)
					}
				}
				for _, v := range tc.hasNot {
					if got.Has(v) {
						t.Errorf("Has(%q) = true", v)
					}
				}
			}
			if got := tc.a.Intersects(tc.b); got != tc.wantNonEmpty {
				t.Errorf("Intersects = %t, want %t", got, tc.wantNonEmpty)
			}
			if tc.a.String() != aBefore || tc.b.String() != bBefore {
				t.Error("Intersection changed an input")
			}
		})
	}
}

const maxInt = int(^uint(0) >> 1)

// testValues returns the label values over which properties are checked:
// words, integers, integers spelt differently, and the edges of int64.
func testValues() []string {
	return []string{"a", "b", "c", "0", "1", "2", "3", "4", "01", "+2", "-1", "", "9223372036854775807", "-9223372036854775808"}
}

// randomRequirement returns a requirement on key built from one to three
// random operators over a small domain, including forms the API rejects.
func randomRequirement(rng *rand.Rand, key string) *Requirement {
	r := randomSingle(rng, key)
	for range rng.IntN(3) {
		r = r.Intersection(randomSingle(rng, key))
	}
	return r
}

func randomSingle(rng *rand.Rand, key string) *Requirement {
	ops := []corev1.NodeSelectorOperator{in, notIn, exists, dne, gt, lt, opGte, opLte}
	op := ops[rng.IntN(len(ops))]
	var minValues *int
	if rng.IntN(4) == 0 {
		minValues = intPtr(1 + rng.IntN(3))
	}
	switch op {
	case in, notIn:
		var values []string
		domain := testValues()
		for range rng.IntN(4) {
			values = append(values, domain[rng.IntN(len(domain))])
		}
		return NewRequirementWithMinValues(key, op, minValues, values...)
	case gt, lt, opGte, opLte:
		bounds := []string{"-2", "0", "1", "2", "3", "4", "9223372036854775807", "-9223372036854775808", "x"}
		return NewRequirementWithMinValues(key, op, minValues, bounds[rng.IntN(len(bounds))])
	default:
		return NewRequirementWithMinValues(key, op, minValues)
	}
}

func TestIntersectionProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	opts := cmp.AllowUnexported(Requirement{})
	for i := range 5000 {
		a, b := randomRequirement(rng, "k"), randomRequirement(rng, "k")
		ab := a.Intersection(b)
		for _, v := range testValues() {
			if got, want := ab.Has(v), a.Has(v) && b.Has(v); got != want {
				t.Fatalf("case %d: (%s) ∩ (%s) = %s: Has(%q) = %t, want %t", i, a, b, ab, v, got, want)
			}
		}
		if got, want := allowsAbsence(ab), allowsAbsence(a) && allowsAbsence(b); got != want {
			t.Fatalf("case %d: (%s) ∩ (%s) = %s: absence allowed %t, want %t", i, a, b, ab, got, want)
		}
		if got, want := a.Intersects(b), nonEmpty(ab); got != want || b.Intersects(a) != want {
			t.Fatalf("case %d: (%s).Intersects(%s) = %t, but the intersection %s is non-empty: %t", i, a, b, got, ab, want)
		}
		if ab.MinValues() != max(a.MinValues(), b.MinValues()) {
			t.Fatalf("case %d: MinValues %d from %d and %d", i, ab.MinValues(), a.MinValues(), b.MinValues())
		}
		// One representation per set: order and repetition do not matter.
		if diff := cmp.Diff(ab, b.Intersection(a), opts); diff != "" {
			t.Fatalf("case %d: not commutative (-a∩b +b∩a):\n%s", i, diff)
		}
		if diff := cmp.Diff(ab, ab.Intersection(ab), opts); diff != "" {
			t.Fatalf("case %d: not idempotent (-a∩b +(a∩b)∩(a∩b)):\n%s", i, diff)
		}
		c := randomRequirement(rng, "k")
		if diff := cmp.Diff(ab.Intersection(c), a.Intersection(b.Intersection(c)), opts); diff != "" {
			t.Fatalf("case %d: not associative:\n%s", i, diff)
		}
		if ab.Len() > 0 && !ab.Has(ab.Any()) {
			t.Fatalf("case %d: %s: Any() = %q is not allowed", i, ab, ab.Any())
		}
		if ab.Len() == 0 && ab.Any() != "" {
			t.Fatalf("case %d: %s: Any() = %q from an empty set", i, ab, ab.Any())
		}
	}
}

func TestIntersectsDoesNotAllocate(t *testing.T) {
	types := NewRequirement("k", in, "m5.large", "m5.xlarge", "c5.large", "c5.xlarge", "r5.large")
	cases := []struct {
		name string
		a, b *Requirement
	}{
		{"In∩In", types, NewRequirement("k", in, "c5.xlarge")},
		{"In∩In disjoint", types, NewRequirement("k", in, "t3.micro")},
		{"In∩NotIn", types, NewRequirement("k", notIn, "m5.large")},
		{"In∩Gt with words", types, NewRequirement("k", gt, "4")},
		{"NotIn∩Exists", NewRequirement("k", notIn, "a"), NewRequirement("k", exists)},
		{"Gt∩Lt", NewRequirement("k", gt, "2"), NewRequirement("k", lt, "5")},
	}
	for _, tc := range cases {
		if allocs := testing.AllocsPerRun(100, func() { tc.a.Intersects(tc.b) }); allocs != 0 {
			t.Errorf("%s: %v allocs", tc.name, allocs)
		}
	}
}
