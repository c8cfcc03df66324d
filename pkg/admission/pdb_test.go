package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// PDBs the API server refuses are refused, each error at its path.
func TestPodDisruptionBudget(t *testing.T) {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	pdb := func(mod func(*policyv1.PodDisruptionBudgetSpec)) *policyv1.PodDisruptionBudget {
		p := &policyv1.PodDisruptionBudget{Spec: policyv1.PodDisruptionBudgetSpec{Selector: selector, MinAvailable: ptr.To(intstr.FromInt32(1))}}
		mod(&p.Spec)
		return p
	}
	policy := func(p string) *policyv1.UnhealthyPodEvictionPolicyType {
		return ptr.To(policyv1.UnhealthyPodEvictionPolicyType(p))
	}
	cases := []struct {
		name string
		pdb  *policyv1.PodDisruptionBudget
		want []string
	}{
		{"a count", pdb(func(*policyv1.PodDisruptionBudgetSpec) {}), nil},
		{"100% and a policy", pdb(func(s *policyv1.PodDisruptionBudgetSpec) {
			s.MinAvailable = ptr.To(intstr.FromString("100%"))
			s.UnhealthyPodEvictionPolicy = policy("AlwaysAllow")
		}), nil},
		{"maxUnavailable 0%", pdb(func(s *policyv1.PodDisruptionBudgetSpec) {
			s.MinAvailable, s.MaxUnavailable = nil, ptr.To(intstr.FromString("0%"))
		}), nil},
		{"more than 100%", pdb(func(s *policyv1.PodDisruptionBudgetSpec) { s.MinAvailable = ptr.To(intstr.FromString("150%")) }),
			[]string{`spec.minAvailable: Invalid value: "150%": must not be greater than 100%`}},
		{"maxUnavailable more than 100%", pdb(func(s *policyv1.PodDisruptionBudgetSpec) {
			s.MinAvailable, s.MaxUnavailable = nil, ptr.To(intstr.FromString("101%"))
		}), []string{`spec.maxUnavailable: Invalid value: "101%": must not be greater than 100%`}},
		{"a percentage beyond an int", pdb(func(s *policyv1.PodDisruptionBudgetSpec) {
			s.MinAvailable = ptr.To(intstr.FromString("99999999999999999999%"))
		}), []string{`spec.minAvailable: Invalid value: "99999999999999999999%": must not be greater than 100%`}},
		{"an unknown eviction policy", pdb(func(s *policyv1.PodDisruptionBudgetSpec) { s.UnhealthyPodEvictionPolicy = policy("Sometimes") }),
			[]string{`spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"`}},
		{"negative", pdb(func(s *policyv1.PodDisruptionBudgetSpec) { s.MinAvailable = ptr.To(intstr.FromInt32(-1)) }),
			[]string{`spec.minAvailable: Invalid value: -1: must be greater than or equal to 0`}},
		{"not a percentage", pdb(func(s *policyv1.PodDisruptionBudgetSpec) { s.MinAvailable = ptr.To(intstr.FromString("half")) }),
			[]string{`spec.minAvailable: Invalid value: "half": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`}},
		{"both bounds", pdb(func(s *policyv1.PodDisruptionBudgetSpec) { s.MaxUnavailable = ptr.To(intstr.FromInt32(1)) }),
			[]string{`spec: Invalid value: minAvailable and maxUnavailable cannot be both set`}},
		{"a bad selector", pdb(func(s *policyv1.PodDisruptionBudgetSpec) {
			s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
		}), []string{`spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`}},
		{"a bad selector value", pdb(func(s *policyv1.PodDisruptionBudgetSpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a b"}}
		}), []string{`spec.selector.matchLabels: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, messages(PodDisruptionBudget(tc.pdb))); diff != "" {
				t.Errorf("PodDisruptionBudget (-want +got):\n%s", diff)
			}
		})
	}
}
