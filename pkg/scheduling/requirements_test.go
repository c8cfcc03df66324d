package scheduling

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestConstructors(t *testing.T) {
	opts := cmp.AllowUnexported(Requirement{})
	want := Requirements{
		"a": NewRequirement("a", in, "2"),
		"b": NewRequirement("b", notIn, "x"),
	}
	got := NewRequirements(NewRequirement("a", in, "1", "2"), NewRequirement("b", notIn, "x"), NewRequirement("a", gt, "1"), nil)
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("NewRequirements (-want +got):\n%s", diff)
	}
	got = NewNodeSelectorRequirements(
		corev1.NodeSelectorRequirement{Key: "a", Operator: in, Values: []string{"1", "2"}},
		corev1.NodeSelectorRequirement{Key: "b", Operator: notIn, Values: []string{"x"}},
		corev1.NodeSelectorRequirement{Key: "a", Operator: gt, Values: []string{"1"}},
	)
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("NewNodeSelectorRequirements (-want +got):\n%s", diff)
	}
	got = NewNodeSelectorRequirementsWithMinValues(
		v1.NodeSelectorRequirementWithMinValues{Key: "a", Operator: in, Values: []string{"1", "2"}, MinValues: intPtr(1)},
		v1.NodeSelectorRequirementWithMinValues{Key: "b", Operator: notIn, Values: []string{"x"}},
		v1.NodeSelectorRequirementWithMinValues{Key: "a", Operator: opGte, Values: []string{"2"}},
	)
	want["a"] = NewRequirementWithMinValues("a", in, intPtr(1), "2")
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("NewNodeSelectorRequirementsWithMinValues (-want +got):\n%s", diff)
	}
	got = NewLabelRequirements(map[string]string{"a": "1", "b": ""})
	want = Requirements{"a": NewRequirement("a", in, "1"), "b": NewRequirement("b", in, "")}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("NewLabelRequirements (-want +got):\n%s", diff)
	}
}

func TestGetMissingKeyAllowsAnythingOrAbsence(t *testing.T) {
	r := NewRequirements(NewRequirement("a", in, "1"))
	got := r.Get("b")
	if diff := cmp.Diff(summary{Op: notIn, Len: maxInt, Any: "0", Absent: true}, summarize(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got.Key() != "b" || !got.Has("x") || r.Has("b") || len(r) != 1 {
		t.Errorf("Get(b) = %s, r = %s", got, r)
	}
	if r.Get("a") != r["a"] {
		t.Error("Get(a) is not the stored requirement")
	}
	// Adding what Get says about a key changes nothing about the nodes r allows.
	r.Add(got)
	if !r.Has("b") || r.Matches(map[string]string{"a": "1"}) != nil || r.Matches(map[string]string{"a": "1", "b": "z"}) != nil {
		t.Errorf("after Add(Get(b)): %s", r)
	}
}

func TestAddCloneIntersection(t *testing.T) {
	r := NewRequirements(NewRequirement("a", in, "1", "2"))
	c := r.Clone()
	c.Add(NewRequirement("a", in, "2", "3"), NewRequirement("b", exists))
	if got, want := r.String(), "a In [1 2]"; got != want {
		t.Errorf("original after Add to clone: %q, want %q", got, want)
	}
	if got, want := c.String(), "a In [2], b Exists"; got != want {
		t.Errorf("clone: %q, want %q", got, want)
	}
	if Requirements(nil).Clone() == nil {
		t.Error("Clone of nil is nil")
	}
	other := NewRequirements(NewRequirement("a", notIn, "1"), NewRequirement("c", dne))
	if got, want := r.Intersection(other).String(), "a In [2], c DoesNotExist"; got != want {
		t.Errorf("Intersection: %q, want %q", got, want)
	}
	if got, want := r.String()+"; "+other.String(), "a In [1 2]; a NotIn [1], c DoesNotExist"; got != want {
		t.Errorf("Intersection changed its inputs: %q", got)
	}
	if got, want := sets.List(r.Intersection(other).Keys()), []string{"a", "c"}; !cmp.Equal(got, want) {
		t.Errorf("Keys() = %q, want %q", got, want)
	}
}

func TestRequirementsIntersects(t *testing.T) {
	node := NewRequirements(
		NewRequirement(v1.LabelZone, in, "a", "b"),
		NewRequirement(v1.LabelArch, in, "amd64"),
		NewRequirement("gpu", dne),
	)
	cases := []struct {
		name  string
		other Requirements
		want  string
	}{
		{name: "empty", other: Requirements{}},
		{name: "overlap", other: NewRequirements(NewRequirement(v1.LabelZone, in, "b", "c"))},
		{name: "keys on one side only are not checked", other: NewRequirements(NewRequirement("team", in, "ml"))},
		{name: "both allow absence", other: NewRequirements(NewRequirement("gpu", notIn, "a100"))},
		{name: "disjoint", other: NewRequirements(NewRequirement(v1.LabelZone, in, "c"), NewRequirement(v1.LabelArch, in, "amd64")),
			want: "key topology.kubernetes.io/zone: topology.kubernetes.io/zone In [a b] does not intersect topology.kubernetes.io/zone In [c]"},
		{name: "every failing key, sorted", other: NewRequirements(NewRequirement(v1.LabelZone, in, "c"), NewRequirement(v1.LabelArch, in, "arm64"), NewRequirement("gpu", exists)),
			want: "key gpu: gpu DoesNotExist does not intersect gpu Exists\n" +
				"key kubernetes.io/arch: kubernetes.io/arch In [amd64] does not intersect kubernetes.io/arch In [arm64]\n" +
				"key topology.kubernetes.io/zone: topology.kubernetes.io/zone In [a b] does not intersect topology.kubernetes.io/zone In [c]"},
	}
	for _, tc := range cases {
		if got := errString(node.Intersects(tc.other)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		if (node.Intersects(tc.other) == nil) != (tc.other.Intersects(node) == nil) {
			t.Errorf("%s: not symmetric", tc.name)
		}
	}
}

func TestCompatible(t *testing.T) {
	node := NewRequirements(
		NewRequirement(v1.LabelInstanceType, in, "m5.large", "c5.large"),
		NewRequirement(v1.LabelZone, in, "a", "b"),
		NewRequirement(v1.CapacityTypeLabelKey, in, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand),
		NewRequirement(v1.NodePoolLabelKey, in, "default"),
		NewRequirement("team", in, "ml"),
		NewRequirement("tier", notIn, "batch"),
	)
	wellKnown := WellKnownLabels()
	cases := []struct {
		name           string
		pod            Requirements
		allowUndefined sets.Set[string]
		want           string
	}{
		{name: "no requirements", pod: Requirements{}},
		{name: "intersecting", pod: NewRequirements(NewRequirement(v1.LabelZone, in, "a"), NewRequirement(v1.CapacityTypeLabelKey, in, v1.CapacityTypeSpot))},
		{name: "disjoint", pod: NewRequirements(NewRequirement(v1.LabelZone, in, "c")),
			want: "key topology.kubernetes.io/zone: topology.kubernetes.io/zone In [a b] does not intersect topology.kubernetes.io/zone In [c]"},
		{name: "undefined well-known key", pod: NewRequirements(NewRequirement(v1.LabelOS, in, "linux")),
			want: "key kubernetes.io/os: kubernetes.io/os In [linux] needs the label, which is undefined"},
		{name: "undefined well-known key allowed", pod: NewRequirements(NewRequirement(v1.LabelOS, in, "linux"), NewRequirement(v1.LabelInstanceCPU, gt, "3")),
			allowUndefined: wellKnown},
		{name: "undefined custom key not allowed by well-known", pod: NewRequirements(NewRequirement("gpu", exists)), allowUndefined: wellKnown,
			want: "key gpu: gpu Exists needs the label, which is undefined"},
		{name: "undefined key with NotIn", pod: NewRequirements(NewRequirement("gpu", notIn, "a100"))},
		{name: "undefined key with DoesNotExist", pod: NewRequirements(NewRequirement("gpu", dne))},
		{name: "undefined key with Exists∩NotIn needs the label", pod: NewRequirements(NewRequirement("gpu", exists), NewRequirement("gpu", notIn, "a100")),
			want: "key gpu: gpu NotIn [a100], gpu Exists needs the label, which is undefined"},
		{name: "defined key with DoesNotExist", pod: NewRequirements(NewRequirement("team", dne)),
			want: "key team: team In [ml] does not intersect team DoesNotExist"},
		{name: "defined key with NotIn", pod: NewRequirements(NewRequirement("team", notIn, "web"))},
		{name: "defined key excluding its only value", pod: NewRequirements(NewRequirement("team", notIn, "ml")),
			want: "key team: team In [ml] does not intersect team NotIn [ml]"},
		{name: "both allow absence", pod: NewRequirements(NewRequirement("tier", dne))},
		{name: "node NotIn against pod Exists", pod: NewRequirements(NewRequirement("tier", exists))},
		{name: "every failing key, sorted", pod: NewRequirements(NewRequirement(v1.LabelZone, in, "c"), NewRequirement("gpu", exists), NewRequirement(v1.LabelArch, in, "arm64")),
			allowUndefined: sets.New(v1.LabelArch),
			want: "key gpu: gpu Exists needs the label, which is undefined\n" +
				"key topology.kubernetes.io/zone: topology.kubernetes.io/zone In [a b] does not intersect topology.kubernetes.io/zone In [c]"},
	}
	for _, tc := range cases {
		if got := errString(node.Compatible(tc.pod, tc.allowUndefined)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLabels(t *testing.T) {
	r := NewRequirements(
		NewRequirement(v1.NodePoolLabelKey, in, "default"),
		NewRequirement(v1.CapacityTypeLabelKey, in, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand),
		NewRequirement(v1.LabelZone, in, "a"),
		NewRequirement(v1.LabelHostname, in, "placeholder"),
		NewRequirement(v1.LabelInstanceCPU, gt, "4"),
		NewRequirement("team", exists),
		NewRequirement("tier", in, "b", "a"),
		NewRequirement("gpu", notIn, "a100"),
		NewRequirement("spot-only", dne),
		NewRequirement("impossible", exists), NewRequirement("impossible", dne),
		NewRequirement("cores", gt, "4"),
		NewRequirement("empty", in, ""),
	)
	want := map[string]string{
		v1.NodePoolLabelKey: "default",
		v1.LabelZone:        "a",
		"team":              "0",
		"tier":              "a",
		"cores":             "5",
		"empty":             "",
	}
	got := r.Labels()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := r.Matches(got); err == nil {
		t.Error("the impossible requirement matched")
	}
	delete(r, "impossible")
	got[v1.CapacityTypeLabelKey], got[v1.LabelHostname], got[v1.LabelInstanceCPU] = v1.CapacityTypeSpot, "placeholder", "8"
	if err := r.Matches(got); err != nil {
		t.Errorf("a node with the labels, once the cloud sets its own, does not match: %v", err)
	}
}

func TestNodeSelectorRequirementsRoundTripExactly(t *testing.T) {
	r := NewRequirements(
		NewRequirement("z", in, "b", "a"),
		NewRequirementWithMinValues("cpu", gt, intPtr(2), "2"), NewRequirement("cpu", lt, "9"), NewRequirement("cpu", notIn, "4", "x"),
		NewRequirement("gpu", exists), NewRequirement("gpu", notIn, "a100"),
		NewRequirement("never", in, "a"), NewRequirement("never", in, "b"),
		NewRequirement("gone", dne),
	)
	want := []v1.NodeSelectorRequirementWithMinValues{
		{Key: "cpu", Operator: gt, Values: []string{"2"}, MinValues: intPtr(2)},
		{Key: "cpu", Operator: lt, Values: []string{"9"}},
		{Key: "cpu", Operator: notIn, Values: []string{"4"}},
		{Key: "gone", Operator: dne},
		{Key: "gpu", Operator: notIn, Values: []string{"a100"}},
		{Key: "gpu", Operator: exists},
		{Key: "never", Operator: dne},
		{Key: "never", Operator: exists},
		{Key: "z", Operator: in, Values: []string{"a", "b"}},
	}
	got := r.NodeSelectorRequirements()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got, want := r.String(), "cpu Gt 2, cpu Lt 9, cpu NotIn [4] minValues 2, gone DoesNotExist, gpu NotIn [a100], gpu Exists, never DoesNotExist, never Exists, z In [a b]"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}

	opts := cmp.AllowUnexported(Requirement{})
	rng := rand.New(rand.NewPCG(13, 17))
	for range 2000 {
		r := Requirements{}
		for _, key := range []string{"a", "b", "c"}[:1+rng.IntN(3)] {
			r.Add(randomRequirement(rng, key))
		}
		back := NewNodeSelectorRequirementsWithMinValues(r.NodeSelectorRequirements()...)
		if diff := cmp.Diff(r, back, opts); diff != "" {
			t.Fatalf("%s: (-want +got):\n%s", r, diff)
		}
		if r.String() != back.String() {
			t.Fatalf("String() not stable: %q, %q", r.String(), back.String())
		}
	}
}

func TestMinValues(t *testing.T) {
	r := NewRequirements(NewRequirement("a", in, "1"))
	if r.HasMinValues() {
		t.Error("HasMinValues without any")
	}
	r.Add(NewRequirementWithMinValues(v1.LabelInstanceType, exists, intPtr(3)), NewRequirementWithMinValues(v1.LabelInstanceFamily, exists, intPtr(2)))
	if !r.HasMinValues() {
		t.Error("HasMinValues = false")
	}
	counts := map[string]int{v1.LabelInstanceType: 2, v1.LabelInstanceFamily: 2}
	got := r.MinValuesViolations(func(key string) int { return counts[key] })
	if diff := cmp.Diff([]string{v1.LabelInstanceType}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	counts[v1.LabelInstanceType] = 5
	if got := r.MinValuesViolations(func(key string) int { return counts[key] }); got != nil {
		t.Errorf("violations %q", got)
	}
}

// realistic returns the requirements of a NodeClaim (six keys, sixty
// instance types) and of a pod that fits it (three keys, one of which the
// NodeClaim leaves to the cloud).
func realistic() (nodeClaim, pod Requirements) {
	types := make([]string, 0, 60)
	for _, family := range []string{"c5", "c6i", "m5", "m6i", "r5", "r6i"} {
		for i := range 10 {
			types = append(types, family+"."+strconv.Itoa(i+1)+"xlarge")
		}
	}
	nodeClaim = NewRequirements(
		NewRequirement(v1.LabelInstanceType, in, types...),
		NewRequirement(v1.LabelZone, in, "us-east-1a", "us-east-1b", "us-east-1c"),
		NewRequirement(v1.CapacityTypeLabelKey, in, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand),
		NewRequirement(v1.LabelArch, in, "amd64"),
		NewRequirement(v1.LabelOS, in, "linux"),
		NewRequirement(v1.NodePoolLabelKey, in, "default"),
	)
	pod = NewRequirements(
		NewRequirement(v1.LabelZone, in, "us-east-1b"),
		NewRequirement(v1.LabelInstanceType, notIn, "m5.1xlarge", "m5.2xlarge"),
		NewRequirement(v1.LabelInstanceCPU, gt, "3"),
	)
	return nodeClaim, pod
}

func TestSuccessPathsDoNotAllocate(t *testing.T) {
	nodeClaim, pod := realistic()
	wellKnown := WellKnownLabels()
	labels := map[string]string{v1.LabelZone: "us-east-1b", v1.LabelInstanceType: "c5.4xlarge", v1.LabelInstanceCPU: "16"}
	checks := map[string]func() error{
		"Intersects": func() error { return nodeClaim.Intersects(pod) },
		"Compatible": func() error { return nodeClaim.Compatible(pod, wellKnown) },
		"Matches":    func() error { return pod.Matches(labels) },
	}
	for name, check := range checks {
		if err := check(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if allocs := testing.AllocsPerRun(100, func() { _ = check() }); allocs != 0 {
			t.Errorf("%s: %v allocs", name, allocs)
		}
	}
}

func BenchmarkIntersects(b *testing.B) {
	nodeClaim, pod := realistic()
	b.Run("Requirements", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := nodeClaim.Intersects(pod); err != nil {
				b.Fatal(err)
			}
		}
	})
	pairs := []struct {
		name string
		a, b *Requirement
	}{
		{"In60∩In1", nodeClaim[v1.LabelInstanceType], NewRequirement(v1.LabelInstanceType, in, "r6i.9xlarge")},
		{"In60∩NotIn2", nodeClaim[v1.LabelInstanceType], pod[v1.LabelInstanceType]},
		{"In3∩Gt", NewRequirement(v1.LabelInstanceCPU, in, "2", "4", "8"), pod[v1.LabelInstanceCPU]},
	}
	for _, p := range pairs {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !p.a.Intersects(p.b) {
					b.Fatal("no intersection")
				}
			}
		})
	}
}

func BenchmarkCompatible(b *testing.B) {
	nodeClaim, pod := realistic()
	wellKnown := WellKnownLabels()
	b.ReportAllocs()
	for b.Loop() {
		if err := nodeClaim.Compatible(pod, wellKnown); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMatches(b *testing.B) {
	_, pod := realistic()
	labels := map[string]string{v1.LabelZone: "us-east-1b", v1.LabelInstanceType: "c5.4xlarge", v1.LabelInstanceCPU: "16", v1.LabelArch: "amd64"}
	b.ReportAllocs()
	for b.Loop() {
		if err := pod.Matches(labels); err != nil {
			b.Fatal(err)
		}
	}
}
