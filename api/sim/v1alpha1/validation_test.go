package v1alpha1_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/pkg/test"
)

var env *test.Environment

func TestMain(m *testing.M) {
	os.Exit(test.MainWithEnvironment(m, func(e *test.Environment) { env = e }))
}

func withTerms(terms ...simv1alpha1.CapacityReservationSelectorTerm) func(*simv1alpha1.SimNodeClass) {
	return func(nc *simv1alpha1.SimNodeClass) { nc.Spec.CapacityReservationSelectorTerms = terms }
}

func invalidSimNodeClasses() []struct {
	name      string
	nodeClass *simv1alpha1.SimNodeClass
	field     string
	message   string
} {
	return []struct {
		name      string
		nodeClass *simv1alpha1.SimNodeClass
		field     string
		message   string
	}{
		{"id with instanceType", test.SimNodeClass(withTerms(simv1alpha1.CapacityReservationSelectorTerm{ID: "cr-1", InstanceType: "p5.48xlarge"})),
			"spec.capacityReservationSelectorTerms[0]", "'id' is mutually exclusive"},
		{"id with tags", test.SimNodeClass(withTerms(simv1alpha1.CapacityReservationSelectorTerm{ID: "cr-1", Tags: map[string]string{"team": "ml"}})),
			"spec.capacityReservationSelectorTerms[0]", "'id' is mutually exclusive"},
		{"empty term", test.SimNodeClass(withTerms(simv1alpha1.CapacityReservationSelectorTerm{})),
			"spec.capacityReservationSelectorTerms[0]", "must set at least one of"},
		{"malformed id", test.SimNodeClass(withTerms(simv1alpha1.CapacityReservationSelectorTerm{ID: "reservation-1"})),
			"spec.capacityReservationSelectorTerms[0].id", "should match"},
		{"unknown reservation type", test.SimNodeClass(withTerms(simv1alpha1.CapacityReservationSelectorTerm{Type: "shared"})),
			"spec.capacityReservationSelectorTerms[0].type", `Unsupported value: "shared"`},
		{"short owner id", test.SimNodeClass(withTerms(simv1alpha1.CapacityReservationSelectorTerm{OwnerID: "1234"})),
			"spec.capacityReservationSelectorTerms[0].ownerID", "should match"},
		{"empty tag value", test.SimNodeClass(withTerms(simv1alpha1.CapacityReservationSelectorTerm{Tags: map[string]string{"team": ""}})),
			"spec.capacityReservationSelectorTerms[0].tags", "empty tag keys or values aren't supported"},
		{"spot max price not a decimal", test.SimNodeClass(func(nc *simv1alpha1.SimNodeClass) { nc.Spec.SpotMaxPrice = ptr.To("$0.40") }),
			"spec.spotMaxPrice", "should match"},
		{"negative spot max price", test.SimNodeClass(func(nc *simv1alpha1.SimNodeClass) { nc.Spec.SpotMaxPrice = ptr.To("-1") }),
			"spec.spotMaxPrice", "should match"},
		{"unknown eviction policy", test.SimNodeClass(func(nc *simv1alpha1.SimNodeClass) { nc.Spec.EvictionPolicy = "Hibernate" }),
			"spec.evictionPolicy", `Unsupported value: "Hibernate"`},
	}
}

func TestInvalidSimNodeClassesAreRejected(t *testing.T) {
	ctx := context.Background()
	for _, tc := range invalidSimNodeClasses() {
		t.Run(tc.name, func(t *testing.T) {
			err := env.Client.Create(ctx, tc.nodeClass)
			if err == nil {
				t.Fatalf("accepted; want rejection at %s: %s", tc.field, tc.message)
			}
			if !strings.Contains(err.Error(), tc.field+":") || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("error %q\ndoes not name field %q with %q", err, tc.field, tc.message)
			}
		})
	}
}

func TestValidSimNodeClass(t *testing.T) {
	nc := test.SimNodeClass(
		withTerms(
			simv1alpha1.CapacityReservationSelectorTerm{ID: "cr-0a1"},
			simv1alpha1.CapacityReservationSelectorTerm{InstanceType: "p5.48xlarge", OwnerID: "111122223333", Type: simv1alpha1.ReservationTypeTargeted, Tags: map[string]string{"team": "*"}},
		),
		func(nc *simv1alpha1.SimNodeClass) {
			nc.Spec.SpotMaxPrice = ptr.To("0.0634")
			nc.Spec.EvictionPolicy = simv1alpha1.EvictionPolicyDelete
		},
	)
	if err := env.Client.Create(context.Background(), nc); err != nil {
		t.Fatal(err)
	}
}

func TestEveryCELRuleIsExercised(t *testing.T) {
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		if c.Spec.Group != simv1alpha1.Group {
			continue
		}
		for _, rule := range test.CELRules(c) {
			found := false
			for _, tc := range invalidSimNodeClasses() {
				found = found || strings.Contains(rule.Message, tc.message)
			}
			if !found {
				t.Errorf("%s: no test asserts the rule %q", c.Name, rule.Message)
			}
		}
	}
}
