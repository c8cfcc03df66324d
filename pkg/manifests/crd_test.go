package manifests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/pkg/test"
)

func newLoader(t *testing.T) *Loader {
	t.Helper()
	l, err := NewLoader()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// manifest is obj as a YAML document, as the client would send it.
func manifest(t *testing.T, gvk schema.GroupVersionKind, obj any) []byte {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// assertRejected wants some line of err to name the document, the object
// and field, and say message, as api/v1's assertRejected wants of the
// real apiserver.
func assertRejected(t *testing.T, err error, object, field, message string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want rejection at %s: %s", field, message)
	}
	prefix := fmt.Sprintf("nodes.yaml, document 1 (%s): %s:", object, field)
	for line := range strings.Lines(err.Error()) {
		if strings.HasPrefix(line, prefix) && strings.Contains(line, message) {
			return
		}
	}
	t.Fatalf("error %q\nhas no line %q with %q", err, prefix, message)
}

// Parity with the real API server: every NodePool api/v1 asserts the
// apiserver rejects, the loader rejects offline, naming the same field
// with the same message.
func TestInvalidNodePoolsAreRejectedOffline(t *testing.T) {
	l := newLoader(t)
	for _, tc := range test.InvalidNodePools() {
		t.Run(tc.Name, func(t *testing.T) {
			doc := manifest(t, v1.SchemeGroupVersion.WithKind("NodePool"), tc.NodePool)
			assertRejected(t, l.Read("nodes.yaml", doc, &Set{}), "NodePool "+tc.NodePool.Name, tc.Field, tc.Message)
		})
	}
}

func TestValidNodePoolsAreAcceptedOffline(t *testing.T) {
	l := newLoader(t)
	for _, tc := range test.ValidNodePools() {
		t.Run(tc.Name, func(t *testing.T) {
			doc := manifest(t, v1.SchemeGroupVersion.WithKind("NodePool"), tc.NodePool)
			if err := l.Read("nodes.yaml", doc, &Set{}); err != nil {
				t.Fatalf("rejected: %v", err)
			}
		})
	}
}

// invalidCRDCase is a document the apiserver rejects; those for
// SimNodeClass and durations mirror api/sim/v1alpha1's
// TestInvalidSimNodeClassesAreRejected and api/v1's
// TestInvalidDurationsAreRejected.
type invalidCRDCase struct {
	name, doc, field, message string
}

func invalidCRDCases() []invalidCRDCase {
	class := "apiVersion: sim.capstan.dev/v1alpha1\nkind: SimNodeClass\nmetadata:\n  name: c\nspec:\n  "
	terms := class + "capacityReservationSelectorTerms:\n  - "
	pool := func(disruption, expireAfter string) string {
		return "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: p\nspec:\n  disruption: {" + disruption + "}\n" +
			"  template:\n    spec:\n      requirements: []\n      expireAfter: " + expireAfter + "\n" +
			"      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: c}\n"
	}
	return []invalidCRDCase{
		{"id with instanceType", terms + "{id: cr-1, instanceType: p5.48xlarge}", "spec.capacityReservationSelectorTerms[0]", "'id' is mutually exclusive"},
		{"id with tags", terms + "{id: cr-1, tags: {team: ml}}", "spec.capacityReservationSelectorTerms[0]", "'id' is mutually exclusive"},
		{"empty term", terms + "{}", "spec.capacityReservationSelectorTerms[0]", "must set at least one of"},
		{"malformed id", terms + "{id: reservation-1}", "spec.capacityReservationSelectorTerms[0].id", "should match"},
		{"unknown reservation type", terms + "{type: shared}", "spec.capacityReservationSelectorTerms[0].type", `Unsupported value: "shared"`},
		{"short owner id", terms + "{ownerID: '1234'}", "spec.capacityReservationSelectorTerms[0].ownerID", "should match"},
		{"empty tag value", terms + "{tags: {team: ''}}", "spec.capacityReservationSelectorTerms[0].tags", "empty tag keys or values aren't supported"},
		{"spot max price not a decimal", class + "spotMaxPrice: $0.40", "spec.spotMaxPrice", "should match"},
		{"negative spot max price", class + "spotMaxPrice: '-1'", "spec.spotMaxPrice", "should match"},
		{"unknown eviction policy", class + "evictionPolicy: Hibernate", "spec.evictionPolicy", `Unsupported value: "Hibernate"`},
		{"expireAfter in days", pool("", "30d"), "spec.template.spec.expireAfter", "should match"},
		{"expireAfter lowercase never", pool("", "never"), "spec.template.spec.expireAfter", "should match"},
		{"consolidateAfter a word", pool("consolidateAfter: forever", "1h"), "spec.disruption.consolidateAfter", "should match"},
		{"a name the server would refuse", strings.Replace(pool("", "1h"), "name: p\n", "name: Pool_1\n", 1), "metadata.name", "a lowercase RFC 1123 subdomain"},
		{"no name", strings.Replace(pool("", "1h"), "name: p\n", "labels: {a: b}\n", 1), "metadata.name", "Required value"},
	}
}

func TestInvalidCustomResourcesAreRejectedOffline(t *testing.T) {
	l := newLoader(t)
	for _, tc := range invalidCRDCases() {
		t.Run(tc.name, func(t *testing.T) {
			var u unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(tc.doc), &u.Object); err != nil {
				t.Fatal(err)
			}
			assertRejected(t, l.Read("nodes.yaml", []byte(tc.doc), &Set{}), strings.TrimSpace(u.GetKind()+" "+u.GetName()), tc.field, tc.message)
		})
	}
}

// Every CEL rule of the CRDs simulate reads is asserted by a rejection
// above. Transition rules are left out: they read oldSelf, which a
// create, as reading a manifest is, does not have.
func TestEveryCELRuleIsRejectedOffline(t *testing.T) {
	var asserted []string
	for _, tc := range test.InvalidNodePools() {
		asserted = append(asserted, tc.Message)
	}
	for _, tc := range invalidCRDCases() {
		asserted = append(asserted, tc.message)
	}
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{"NodePool": true, "SimNodeClass": true}
	for _, c := range crds {
		if !read[c.Spec.Names.Kind] {
			continue
		}
		for _, rule := range test.CELRules(c) {
			if strings.Contains(rule.Rule, "oldSelf") {
				continue
			}
			found := false
			for _, a := range asserted {
				found = found || strings.Contains(rule.Message, a)
			}
			if !found {
				t.Errorf("%s: no offline test asserts the rule %q", c.Name, rule.Message)
			}
		}
	}
}

// The CRDs' defaults are applied as the apiserver applies them (api/v1
// TestNodePoolDefaults, TestExamplesAreAccepted), status is dropped as on
// create, and a namespace is cleared from these cluster-scoped kinds.
func TestCustomResourceDefaults(t *testing.T) {
	const data = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
  namespace: team-a
spec:
  template:
    spec:
      requirements: []
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}
status:
  resources: {nodes: "3"}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: budgets
spec:
  disruption:
    budgets:
    - nodes: "0"
      schedule: "@daily"
      duration: 10m
    - nodes: "5"
  template:
    spec:
      requirements: []
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}
---
apiVersion: sim.capstan.dev/v1alpha1
kind: SimNodeClass
metadata:
  name: default
`
	set := &Set{}
	if err := newLoader(t).Read("nodes.yaml", []byte(data), set); err != nil {
		t.Fatal(err)
	}
	pool := func(name string, d v1.Disruption) v1.NodePool {
		return v1.NodePool{
			TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.sh/v1", Kind: "NodePool"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.NodePoolSpec{
				Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
					Requirements: []v1.NodeSelectorRequirementWithMinValues{},
					NodeClassRef: &v1.NodeClassReference{Group: simv1alpha1.Group, Kind: "SimNodeClass", Name: "default"},
					ExpireAfter:  v1.MustParseNillableDuration("720h"),
				}},
				Disruption: d,
			},
		}
	}
	daily := "@daily"
	want := &Set{
		NodePools: []v1.NodePool{
			pool("default", v1.Disruption{
				ConsolidateAfter:    v1.MustParseNillableDuration("0s"),
				ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized,
				Budgets:             []v1.Budget{{Nodes: "10%"}},
			}),
			pool("budgets", v1.Disruption{
				ConsolidateAfter:    v1.MustParseNillableDuration("0s"),
				ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized,
				Budgets:             []v1.Budget{{Nodes: "0", Schedule: &daily, Duration: &metav1.Duration{Duration: 600e9}}, {Nodes: "5"}},
			}),
		},
		SimNodeClasses: []simv1alpha1.SimNodeClass{{
			TypeMeta:   metav1.TypeMeta{APIVersion: "sim.capstan.dev/v1alpha1", Kind: "SimNodeClass"},
			ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec:       simv1alpha1.SimNodeClassSpec{EvictionPolicy: simv1alpha1.EvictionPolicyDeallocate},
		}},
	}
	if diff := cmp.Diff(want, set, cmpopts.IgnoreUnexported(Set{})); diff != "" {
		t.Errorf("read (-want +got):\n%s", diff)
	}
}

// Unknown fields are errors, as with kubectl's default
// --validate=strict, not silently pruned; each is named by path, in
// metadata too.
func TestCustomResourceUnknownFields(t *testing.T) {
	const data = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: p
  lables: {a: b}
spec:
  wieght: 10
  template:
    spec:
      requirements: []
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: c}
      taints: [{key: a, effect: NoSchedule, colour: red}]
`
	err := newLoader(t).Read("nodes.yaml", []byte(data), &Set{})
	want := `nodes.yaml, document 1 (NodePool p): strict decoding error: unknown field "metadata.lables", unknown field "spec.template.spec.taints[0].colour", unknown field "spec.wieght"`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
}

// A document with several problems reports them all, by field path, and
// CEL rules are held back, as the server holds them back, while the
// object has blocking errors.
func TestCustomResourceErrorsAreAggregated(t *testing.T) {
	const data = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: p
spec:
  weight: 0
  disruption: {consolidationPolicy: Always}
  template:
    spec:
      requirements: [{key: topology.kubernetes.io/zone, operator: In}]
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: c}
`
	err := newLoader(t).Read("nodes.yaml", []byte(data), &Set{})
	want := []string{
		`nodes.yaml, document 1 (NodePool p): spec.disruption.consolidationPolicy: Unsupported value: "Always": supported values: "WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"`,
		`nodes.yaml, document 1 (NodePool p): spec.weight: Invalid value: 0: spec.weight in body should be greater than or equal to 1`,
		// The server's own words, path and all.
		`nodes.yaml, document 1 (NodePool p): <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
	}
	if err == nil {
		t.Fatal("accepted")
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("error lines (-want +got):\n%s", diff)
	}
}

// A valid NodePool reaches the typed API as written.
func TestCustomResourceConvertsToTheTypedAPI(t *testing.T) {
	np := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Template.ObjectMeta.Labels = map[string]string{"team": "ml"}
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	})
	set := &Set{}
	if err := newLoader(t).Read("nodes.yaml", manifest(t, v1.SchemeGroupVersion.WithKind("NodePool"), np), set); err != nil {
		t.Fatal(err)
	}
	if len(set.NodePools) != 1 {
		t.Fatalf("read %d NodePools, want 1", len(set.NodePools))
	}
	got := set.NodePools[0].Spec.Template
	if diff := cmp.Diff(np.Spec.Template.ObjectMeta.Labels, got.ObjectMeta.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(np.Spec.Template.Spec.Taints, got.Spec.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
}

// A duration the CRD's pattern lets through but that overflows is an
// error at its field, not a bare conversion error.
func TestOverflowingDurationsNameTheirField(t *testing.T) {
	const doc = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: a}
spec:
  disruption: {consolidateAfter: 9999999999h, budgets: [{nodes: "1", schedule: "@daily", duration: 9999999999h}]}
  template: {spec: {expireAfter: 9999999999h, terminationGracePeriod: 9999999999h, requirements: [], nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}}}
`
	err := newLoader(t).Read("np.yaml", []byte(doc), &Set{})
	const prefix = `np.yaml, document 1 (NodePool a): `
	want := prefix + `spec.disruption.budgets[0].duration: Invalid value: "9999999999h": time: invalid duration "9999999999h"` + "\n" +
		prefix + `spec.disruption.consolidateAfter: Invalid value: "9999999999h": parsing duration "9999999999h", time: invalid duration "9999999999h"` + "\n" +
		prefix + `spec.template.spec.expireAfter: Invalid value: "9999999999h": parsing duration "9999999999h", time: invalid duration "9999999999h"` + "\n" +
		prefix + `spec.template.spec.terminationGracePeriod: Invalid value: "9999999999h": time: invalid duration "9999999999h"`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}
