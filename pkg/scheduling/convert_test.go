package scheduling

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestNodeSelectorRequirementRoundTrip(t *testing.T) {
	cases := []struct {
		in   v1.NodeSelectorRequirementWithMinValues
		want v1.NodeSelectorRequirementWithMinValues
	}{
		{in: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: in, Values: []string{"b", "a"}, MinValues: intPtr(2)},
			want: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: in, Values: []string{"a", "b"}, MinValues: intPtr(2)}},
		{in: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: notIn, Values: []string{"a"}},
			want: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: notIn, Values: []string{"a"}}},
		{in: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: notIn},
			want: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: notIn}},
		{in: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: exists},
			want: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: exists}},
		{in: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: dne},
			want: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: dne}},
		{in: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: gt, Values: []string{"4"}},
			want: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: gt, Values: []string{"4"}}},
		{in: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: gt, Values: []string{"0"}},
			want: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: gt, Values: []string{"0"}}},
		{in: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: lt, Values: []string{"4"}, MinValues: intPtr(1)},
			want: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: lt, Values: []string{"4"}, MinValues: intPtr(1)}},
		{in: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: opGte, Values: []string{"4"}},
			want: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: gt, Values: []string{"3"}}},
		{in: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: opGte, Values: []string{"0"}},
			want: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: opGte, Values: []string{"0"}}},
		{in: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: opLte, Values: []string{"4"}},
			want: v1.NodeSelectorRequirementWithMinValues{Key: "k", Operator: lt, Values: []string{"5"}}},
	}
	opts := cmp.AllowUnexported(Requirement{})
	for _, tc := range cases {
		r := NewRequirementWithMinValues(tc.in.Key, tc.in.Operator, tc.in.MinValues, tc.in.Values...)
		got := r.NodeSelectorRequirement()
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s: (-want +got):\n%s", tc.in.Operator, tc.in.Values, diff)
		}
		back := NewRequirementWithMinValues(got.Key, got.Operator, got.MinValues, got.Values...)
		if diff := cmp.Diff(r, back, opts); diff != "" {
			t.Errorf("%s %s: round trip (-want +got):\n%s", tc.in.Operator, tc.in.Values, diff)
		}
	}
}

func TestOperatorAndValuesDescribeNodeSelectorRequirement(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for range 2000 {
		r := randomRequirement(rng, "k")
		nsr := r.NodeSelectorRequirement()
		if nsr.Operator != r.Operator() || !cmp.Equal(nsr.Values, r.Values()) {
			t.Fatalf("%s: Operator %s Values %q, NodeSelectorRequirement %s %q", r, r.Operator(), r.Values(), nsr.Operator, nsr.Values)
		}
	}
}

func TestRequirementString(t *testing.T) {
	cases := []struct {
		req  *Requirement
		want string
	}{
		{NewRequirement("k", in, "g", "f", "e", "d", "c", "b", "a"), "k In [a b c d e and 2 others]"},
		{NewRequirement("k", in, "e", "d", "c", "b", "a"), "k In [a b c d e]"},
		{NewRequirement("k", notIn, "a"), "k NotIn [a]"},
		{NewRequirement("k", notIn), "k NotIn []"},
		{NewRequirement("k", exists), "k Exists"},
		{NewRequirementWithMinValues("k", dne, intPtr(1)), "k DoesNotExist minValues 1"},
		{NewRequirement("k", gt, "4"), "k Gt 4"},
		{NewRequirement("k", lt, "4"), "k Lt 4"},
		{NewRequirement("k", opGte, "0"), "k Gte 0"},
		{NewRequirement("k", opLte, "4"), "k Lt 5"},
	}
	for _, tc := range cases {
		if got := tc.req.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}
