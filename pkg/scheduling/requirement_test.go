package scheduling

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// summary is what a caller can observe of one requirement.
type summary struct {
	Op        corev1.NodeSelectorOperator
	Values    []string
	Len       int
	Any       string
	Absent    bool
	MinValues int
}

func summarize(r *Requirement) summary {
	return summary{r.Operator(), r.Values(), r.Len(), r.Any(), allowsAbsence(r), r.MinValues()}
}

// allowsAbsence observes absence through the public API.
func allowsAbsence(r *Requirement) bool {
	return Requirements{r.Key(): r}.Matches(nil) == nil
}

func intPtr(n int) *int { return &n }

func TestRequirementOperators(t *testing.T) {
	const (
		in     = corev1.NodeSelectorOpIn
		notIn  = corev1.NodeSelectorOpNotIn
		exists = corev1.NodeSelectorOpExists
		dne    = corev1.NodeSelectorOpDoesNotExist
		gt     = corev1.NodeSelectorOpGt
		lt     = corev1.NodeSelectorOpLt
	)
	all := math.MaxInt
	cases := []struct {
		name    string
		req     *Requirement
		want    summary
		has     []string
		hasNot  []string
		comment string
	}{
		{name: "In sorts and deduplicates", req: NewRequirement("k", in, "b", "a", "a"),
			want: summary{Op: in, Values: []string{"a", "b"}, Len: 2, Any: "a"},
			has:  []string{"a", "b"}, hasNot: []string{"c", "", "A"}},
		{name: "In with empty value", req: NewRequirement("k", in, ""),
			want: summary{Op: in, Values: []string{""}, Len: 1, Any: ""},
			has:  []string{""}, hasNot: []string{"a"}},
		{name: "NotIn", req: NewRequirement("k", notIn, "b", "a"),
			want: summary{Op: notIn, Values: []string{"a", "b"}, Len: all, Any: "0", Absent: true},
			has:  []string{"c", "", "0"}, hasNot: []string{"a", "b"}},
		{name: "NotIn without values allows anything", req: NewRequirement("k", notIn),
			want: summary{Op: notIn, Len: all, Any: "0", Absent: true},
			has:  []string{"a", ""}},
		{name: "NotIn excluding small integers", req: NewRequirement("k", notIn, "0", "1"),
			want: summary{Op: notIn, Values: []string{"0", "1"}, Len: all, Any: "2", Absent: true},
			has:  []string{"2", "00"}, hasNot: []string{"0", "1"}},
		{name: "Exists", req: NewRequirement("k", exists),
			want: summary{Op: exists, Len: all, Any: "0"},
			has:  []string{"a", ""}},
		{name: "Exists ignores values", req: NewRequirement("k", exists, "a"),
			want: summary{Op: exists, Len: all, Any: "0"},
			has:  []string{"a"}},
		{name: "DoesNotExist", req: NewRequirement("k", dne),
			want:   summary{Op: dne, Absent: true},
			hasNot: []string{"a", "", "0"}},
		{name: "Gt", req: NewRequirement("k", gt, "4"),
			want: summary{Op: gt, Values: []string{"4"}, Len: all, Any: "5"},
			has:  []string{"5", "05", "+5", "9223372036854775807"}, hasNot: []string{"4", "-5", "a", "", "5.0", "9223372036854775808"}},
		{name: "Lt", req: NewRequirement("k", lt, "4"),
			want: summary{Op: lt, Values: []string{"4"}, Len: all, Any: "0"},
			has:  []string{"3", "-7", "0"}, hasNot: []string{"4", "a"}},
		{name: "Gte is Gt one less", req: NewRequirement("k", opGte, "4"),
			want: summary{Op: gt, Values: []string{"3"}, Len: all, Any: "4"},
			has:  []string{"4", "5"}, hasNot: []string{"3"}},
		{name: "Lte is Lt one more", req: NewRequirement("k", opLte, "4"),
			want: summary{Op: lt, Values: []string{"5"}, Len: all, Any: "0"},
			has:  []string{"4", "-1"}, hasNot: []string{"5"}},
		{name: "Gte 0 stays Gte to keep the API value non-negative", req: NewRequirement("k", opGte, "0"),
			want: summary{Op: opGte, Values: []string{"0"}, Len: all, Any: "0"},
			has:  []string{"0", "7"}, hasNot: []string{"-1"}},
		{name: "Lt 0 picks the largest allowed", req: NewRequirement("k", lt, "0"),
			want: summary{Op: lt, Values: []string{"0"}, Len: all, Any: "-1"},
			has:  []string{"-1"}, hasNot: []string{"0"}},
		{name: "MinValues", req: NewRequirementWithMinValues("k", in, intPtr(2), "a", "b", "c"),
			want: summary{Op: in, Values: []string{"a", "b", "c"}, Len: 3, Any: "a", MinValues: 2}},
		{name: "MinValues 0 is unset", req: NewRequirementWithMinValues("k", in, intPtr(0), "a"),
			want: summary{Op: in, Values: []string{"a"}, Len: 1, Any: "a"}},
		// Input the API rejects must never match anything.
		{name: "In without values", req: NewRequirement("k", in),
			want: summary{Op: dne}, hasNot: []string{"", "a"}},
		{name: "Gt with a word", req: NewRequirement("k", gt, "four"),
			want: summary{Op: dne}, hasNot: []string{"four", "4"}},
		{name: "Gt with two values", req: NewRequirement("k", gt, "1", "2"),
			want: summary{Op: dne}, hasNot: []string{"3"}},
		{name: "Gt the largest integer", req: NewRequirement("k", gt, strconv.FormatInt(math.MaxInt64, 10)),
			want: summary{Op: dne}, hasNot: []string{"9223372036854775807"}},
		{name: "Lt the smallest integer", req: NewRequirement("k", lt, strconv.FormatInt(math.MinInt64, 10)),
			want: summary{Op: dne}, hasNot: []string{"-9223372036854775808"}},
		{name: "unknown operator", req: NewRequirement("k", "Equals", "a"),
			want: summary{Op: dne}, hasNot: []string{"a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summarize(tc.req)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.req.Key() != "k" {
				t.Errorf("Key() = %q", tc.req.Key())
			}
			for _, v := range tc.has {
				if !tc.req.Has(v) {
					t.Errorf("Has(%q) = false", v)
				}
			}
			for _, v := range tc.hasNot {
				if tc.req.Has(v) {
					t.Errorf("Has(%q) = true", v)
				}
			}
		})
	}
}

func TestAnyWhenEveryIntegerIsExcluded(t *testing.T) {
	cases := []struct {
		req  *Requirement
		want string
	}{
		{NewRequirements(NewRequirement("k", opGte, "5"), NewRequirement("k", opLte, "5"), NewRequirement("k", corev1.NodeSelectorOpNotIn, "5"))["k"], "05"},
		{NewRequirements(NewRequirement("k", opGte, "5"), NewRequirement("k", opLte, "5"), NewRequirement("k", corev1.NodeSelectorOpNotIn, "5", "05"))["k"], "005"},
		{NewRequirements(NewRequirement("k", opLte, "-3"), NewRequirement("k", opGte, "-3"), NewRequirement("k", corev1.NodeSelectorOpNotIn, "-3"))["k"], "-03"},
		{NewRequirements(NewRequirement("k", corev1.NodeSelectorOpLt, "2"), NewRequirement("k", corev1.NodeSelectorOpNotIn, "0", "1"))["k"], "-1"},
		{NewRequirements(NewRequirement("k", opGte, "0"), NewRequirement("k", opLte, "1"), NewRequirement("k", corev1.NodeSelectorOpNotIn, "0", "1"))["k"], "00"},
	}
	for _, tc := range cases {
		if got := tc.req.Any(); got != tc.want || !tc.req.Has(got) {
			t.Errorf("%s: Any() = %q (Has %t), want %q", tc.req, got, tc.req.Has(got), tc.want)
		}
	}
}

func TestValuesReturnsACopy(t *testing.T) {
	r := NewRequirement("k", corev1.NodeSelectorOpIn, "a", "b")
	r.Values()[0] = "z"
	if !r.Has("a") || r.Has("z") {
		t.Error("changing Values() changed the requirement")
	}
	in := []string{"b", "a"}
	r = NewRequirement("k", corev1.NodeSelectorOpIn, in...)
	in[0] = "z"
	if !r.Has("b") {
		t.Error("changing the input slice changed the requirement")
	}
}

func TestWithMinValues(t *testing.T) {
	r := NewRequirementWithMinValues("family", corev1.NodeSelectorOpIn, intPtr(3), "a", "b", "c")
	for _, tc := range []struct{ n, want int }{{2, 2}, {0, 0}, {-1, 0}} {
		got := r.WithMinValues(tc.n)
		if got.MinValues() != tc.want || r.MinValues() != 3 || !slices.Equal(got.Values(), r.Values()) {
			t.Errorf("WithMinValues(%d): minValues %d, values %v; original %d; want %d and the same values", tc.n, got.MinValues(), got.Values(), r.MinValues(), tc.want)
		}
	}
}
