package v1_test

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/pkg/test"
)

// Every CEL rule of the karpenter.sh CRDs is asserted by some rejection
// test above, so dropping a rule (say, to make the CRD fit the cost
// budget) fails the suite.
func TestEveryCELRuleIsExercised(t *testing.T) {
	asserted := []string{"spec is immutable", transitionMessage}
	for _, tc := range test.InvalidNodePools() {
		asserted = append(asserted, tc.Message)
	}
	for _, tc := range test.InvalidNodeOverlays() {
		asserted = append(asserted, tc.Message)
	}
	for _, tc := range immutabilityCases() {
		asserted = append(asserted, tc.message)
	}
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		if c.Spec.Group != v1.Group {
			continue
		}
		for _, rule := range test.CELRules(c) {
			if !exercised(rule, asserted) {
				t.Errorf("%s: no test asserts the rule %q", c.Name, rule.Message)
			}
		}
	}
}

func exercised(rule apiextensionsv1.ValidationRule, asserted []string) bool {
	for _, a := range asserted {
		if a != "" && strings.Contains(rule.Message, a) {
			return true
		}
	}
	return false
}
