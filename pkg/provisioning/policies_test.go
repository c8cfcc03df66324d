package provisioning_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/test"
)

// --min-values-policy, as the reference's (v1.6): Strict leaves a pod
// whose NodePool's minValues the instance types cannot cover unplaced;
// BestEffort launches with minValues lowered to what they cover and says
// so in karpenter.sh/nodeclaim-min-values-relaxed.
func TestMinValuesPolicy(t *testing.T) {
	var its []*cloudprovider.InstanceType
	for _, fam := range []string{"a", "b"} {
		for i := range 3 {
			its = append(its, test.InstanceType(test.InstanceTypeOptions{Name: fam + "." + string(rune('0'+i)), CPU: int64(2 + i), Memory: 8, Family: fam, Price: float64(i + 1)}))
		}
	}
	minFamilies := func(n int) func(*v1.NodePool) {
		return func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{
				Key: v1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b", "c"}, MinValues: &n,
			}}
		}
	}
	type outcome struct {
		Unplaced  map[provisioning.Reason]int
		MinValues int    // the claim's minValues on the family
		Relaxed   string // the annotation
	}
	for _, tc := range []struct {
		name      string
		policy    provisioning.MinValuesPolicy
		minValues int
		want      outcome
	}{
		{"default (Strict): two families cannot cover three", "", 3, outcome{Unplaced: map[provisioning.Reason]int{provisioning.ReasonMinValuesUnsatisfiable: 1}}},
		{"Strict: two families cannot cover three", provisioning.MinValuesPolicyStrict, 3, outcome{Unplaced: map[provisioning.Reason]int{provisioning.ReasonMinValuesUnsatisfiable: 1}}},
		{"BestEffort: launched with two, relaxed", provisioning.MinValuesPolicyBestEffort, 3, outcome{Unplaced: map[provisioning.Reason]int{}, MinValues: 2, Relaxed: "true"}},
		{"BestEffort, minValues met: not relaxed", provisioning.MinValuesPolicyBestEffort, 2, outcome{Unplaced: map[provisioning.Reason]int{}, MinValues: 2, Relaxed: "false"}},
		{"Strict, minValues met: not relaxed", provisioning.MinValuesPolicyStrict, 2, outcome{Unplaced: map[provisioning.Reason]int{}, MinValues: 2, Relaxed: "false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			np := nodePool("default", minFamilies(tc.minValues))
			r := provisioning.Solve(provisioning.Input{
				Pods: pods(1, "1", "1Gi"), NodePools: []*v1.NodePool{np},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": its},
				Options:       provisioning.Options{MaxInstanceTypes: 4, MinValuesPolicy: tc.policy},
			})
			got := outcome{Unplaced: countUnplaced(r)}
			if len(r.NewNodeClaims) == 1 {
				c := r.NewNodeClaims[0]
				got.MinValues = c.Requirements.Get(v1.LabelInstanceFamily).MinValues()
				got.Relaxed = provisioning.NewNodeClaim(np, c, "nc").Annotations[v1.NodeClaimMinValuesRelaxedAnnotationKey]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// --preference-policy: Respect launches where a pod's preferred node
// affinity holds; Ignore places it as if it had none, on the cheapest
// type.
func TestPreferencePolicy(t *testing.T) {
	its := []*cloudprovider.InstanceType{
		test.InstanceType(test.InstanceTypeOptions{Name: "x86.large", CPU: 4, Memory: 8, Price: 1}),
		test.InstanceType(test.InstanceTypeOptions{Name: "arm.large", CPU: 4, Memory: 8, Arch: "arm64", Price: 2}),
	}
	prefersArm := func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
			Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: v1.LabelArch, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}},
		}}}}
	}
	for _, tc := range []struct {
		name   string
		policy provisioning.PreferencePolicy
		want   string
	}{
		{"default (Respect)", "", "arm.large"},
		{"Respect", provisioning.PreferencePolicyRespect, "arm.large"},
		{"Ignore", provisioning.PreferencePolicyIgnore, "x86.large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := provisioning.Solve(provisioning.Input{
				Pods: pods(1, "1", "1Gi", prefersArm), NodePools: []*v1.NodePool{nodePool("default")},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": its},
				Options:       provisioning.Options{PreferencePolicy: tc.policy},
			})
			if len(r.NewNodeClaims) != 1 {
				t.Fatalf("%d claims, unplaced %v", len(r.NewNodeClaims), r.Unplaced)
			}
			if got := r.NewNodeClaims[0].InstanceTypes[0].Name; got != tc.want {
				t.Errorf("launched as %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParsePolicies(t *testing.T) {
	for _, s := range []string{"Strict", "BestEffort"} {
		if p, err := provisioning.ParseMinValuesPolicy(s); err != nil || string(p) != s {
			t.Errorf("ParseMinValuesPolicy(%q) = %q, %v", s, p, err)
		}
	}
	for _, s := range []string{"Respect", "Ignore"} {
		if p, err := provisioning.ParsePreferencePolicy(s); err != nil || string(p) != s {
			t.Errorf("ParsePreferencePolicy(%q) = %q, %v", s, p, err)
		}
	}
	if _, err := provisioning.ParseMinValuesPolicy("strict"); err == nil {
		t.Error("ParseMinValuesPolicy accepted strict")
	}
	if _, err := provisioning.ParsePreferencePolicy("Prefer"); err == nil {
		t.Error("ParsePreferencePolicy accepted Prefer")
	}
}

// MinValuesMet counts distinct label values over the types in order, as
// the solver and consolidation both read it.
func TestMinValuesMet(t *testing.T) {
	its := []*cloudprovider.InstanceType{
		test.InstanceType(test.InstanceTypeOptions{Name: "a.1", CPU: 1, Memory: 2, Family: "a"}),
		test.InstanceType(test.InstanceTypeOptions{Name: "a.2", CPU: 2, Memory: 4, Family: "a"}),
		test.InstanceType(test.InstanceTypeOptions{Name: "b.1", CPU: 1, Memory: 2, Family: "b"}),
		test.InstanceType(test.InstanceTypeOptions{Name: "c.1", CPU: 1, Memory: 2, Family: "c"}),
	}
	families := func(n int) scheduling.Requirements {
		return scheduling.NewRequirements(scheduling.NewRequirementWithMinValues(v1.LabelInstanceFamily, corev1.NodeSelectorOpExists, &n))
	}
	cases := []struct {
		name  string
		reqs  scheduling.Requirements
		n     int
		short map[string]int
	}{
		{"no minValues", scheduling.NewRequirements(scheduling.NewRequirement(v1.LabelInstanceFamily, corev1.NodeSelectorOpExists)), 0, nil},
		{"met by the first", families(1), 1, nil},
		{"a family seen twice counts once", families(2), 3, nil},
		{"met by all", families(3), 4, nil},
		{"never met", families(4), 4, map[string]int{v1.LabelInstanceFamily: 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, short := provisioning.MinValuesMet(tc.reqs, its)
			if n != tc.n || !cmp.Equal(short, tc.short) {
				t.Errorf("MinValuesMet = %d, %v; want %d, %v", n, short, tc.n, tc.short)
			}
		})
	}
}
