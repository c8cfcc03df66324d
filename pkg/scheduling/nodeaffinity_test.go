package scheduling

import (
	"math/rand/v2"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// kubeMatches evaluates one node selector term the way kube-scheduler does.
// kube-scheduler has no Gte or Lte; they become Gt n-1 and Lt n+1.
func kubeMatches(t testing.TB, term []corev1.NodeSelectorRequirement, labels map[string]string) bool {
	t.Helper()
	exprs := make([]corev1.NodeSelectorRequirement, len(term))
	for i, req := range term {
		exprs[i] = req
		if req.Operator != opGte && req.Operator != opLte {
			continue
		}
		n, err := strconv.Atoi(req.Values[0])
		if err != nil {
			t.Fatal(err)
		}
		if req.Operator == opGte {
			exprs[i] = corev1.NodeSelectorRequirement{Key: req.Key, Operator: corev1.NodeSelectorOpGt, Values: []string{strconv.Itoa(n - 1)}}
		} else {
			exprs[i] = corev1.NodeSelectorRequirement{Key: req.Key, Operator: corev1.NodeSelectorOpLt, Values: []string{strconv.Itoa(n + 1)}}
		}
	}
	selector, err := nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: exprs}}})
	if err != nil {
		t.Fatalf("%v: %v", exprs, err)
	}
	return selector.Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}})
}

// checkAgainstKube asserts that Matches, Compatible of the node's labels,
// and Matches after an exact API round trip all agree with kube-scheduler.
func checkAgainstKube(t *testing.T, term []corev1.NodeSelectorRequirement, labels map[string]string) {
	t.Helper()
	want := kubeMatches(t, term, labels)
	r := NewNodeSelectorRequirements(term...)
	if err := r.Matches(labels); (err == nil) != want {
		t.Fatalf("term %v, labels %v: kube-scheduler matches %t, Matches says %v (requirements %s)", term, labels, want, err, r)
	}
	if err := NewLabelRequirements(labels).Compatible(r, nil); (err == nil) != want {
		t.Fatalf("term %v, labels %v: kube-scheduler matches %t, Compatible says %v", term, labels, want, err)
	}
	back := NewNodeSelectorRequirementsWithMinValues(r.NodeSelectorRequirements()...)
	if err := back.Matches(labels); (err == nil) != want {
		t.Fatalf("term %v, labels %v: kube-scheduler matches %t, after a round trip Matches says %v", term, labels, want, err)
	}
}

func TestMatchesAgreesWithKubeScheduler(t *testing.T) {
	req := func(op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: "k", Operator: op, Values: values}
	}
	type labels = map[string]string
	cases := []struct {
		name   string
		term   []corev1.NodeSelectorRequirement
		labels labels
		want   bool
	}{
		{"In present", []corev1.NodeSelectorRequirement{req(in, "a", "b")}, labels{"k": "b"}, true},
		{"In other value", []corev1.NodeSelectorRequirement{req(in, "a")}, labels{"k": "c"}, false},
		{"In absent", []corev1.NodeSelectorRequirement{req(in, "a")}, labels{}, false},
		{"NotIn absent", []corev1.NodeSelectorRequirement{req(notIn, "a")}, labels{}, true},
		{"NotIn other value", []corev1.NodeSelectorRequirement{req(notIn, "a")}, labels{"k": "b"}, true},
		{"NotIn listed value", []corev1.NodeSelectorRequirement{req(notIn, "a")}, labels{"k": "a"}, false},
		{"Exists present empty", []corev1.NodeSelectorRequirement{req(exists)}, labels{"k": ""}, true},
		{"Exists absent", []corev1.NodeSelectorRequirement{req(exists)}, labels{"j": "a"}, false},
		{"DoesNotExist absent", []corev1.NodeSelectorRequirement{req(dne)}, labels{"j": "a"}, true},
		{"DoesNotExist present", []corev1.NodeSelectorRequirement{req(dne)}, labels{"k": ""}, false},
		{"Gt greater", []corev1.NodeSelectorRequirement{req(gt, "2")}, labels{"k": "3"}, true},
		{"Gt equal", []corev1.NodeSelectorRequirement{req(gt, "2")}, labels{"k": "2"}, false},
		{"Gt leading zero", []corev1.NodeSelectorRequirement{req(gt, "2")}, labels{"k": "03"}, true},
		{"Gt word", []corev1.NodeSelectorRequirement{req(gt, "2")}, labels{"k": "a"}, false},
		{"Gt absent", []corev1.NodeSelectorRequirement{req(gt, "2")}, labels{}, false},
		{"Lt less", []corev1.NodeSelectorRequirement{req(lt, "2")}, labels{"k": "1"}, true},
		{"Lt equal", []corev1.NodeSelectorRequirement{req(lt, "2")}, labels{"k": "2"}, false},
		{"Gte equal", []corev1.NodeSelectorRequirement{req(opGte, "2")}, labels{"k": "2"}, true},
		{"Lte equal", []corev1.NodeSelectorRequirement{req(opLte, "2")}, labels{"k": "2"}, true},
		{"Gt and Lt", []corev1.NodeSelectorRequirement{req(gt, "1"), req(lt, "3")}, labels{"k": "2"}, true},
		{"Gt and Lt empty", []corev1.NodeSelectorRequirement{req(gt, "1"), req(lt, "2")}, labels{"k": "2"}, false},
		{"Exists and NotIn absent", []corev1.NodeSelectorRequirement{req(exists), req(notIn, "a")}, labels{}, false},
		{"NotIn and DoesNotExist absent", []corev1.NodeSelectorRequirement{req(notIn, "a"), req(dne)}, labels{}, true},
		{"In and NotIn", []corev1.NodeSelectorRequirement{req(in, "a", "b"), req(notIn, "a")}, labels{"k": "a"}, false},
		{"In and Gt numeric filter", []corev1.NodeSelectorRequirement{req(in, "1", "3", "a"), req(gt, "2")}, labels{"k": "3"}, true},
		{"two keys", []corev1.NodeSelectorRequirement{req(in, "a"), {Key: "j", Operator: dne}}, labels{"k": "a"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := kubeMatches(t, tc.term, tc.labels); got != tc.want {
				t.Fatalf("kube-scheduler says %t, the table %t", got, tc.want)
			}
			checkAgainstKube(t, tc.term, tc.labels)
		})
	}
}

func TestMatchesAgreesWithKubeSchedulerRandomly(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 43))
	keys := []string{"k1", "k2"}
	values := []string{"a", "b", "c", "1", "2", "3"}
	labelValues := append([]string{"01", ""}, values...)
	ops := []corev1.NodeSelectorOperator{in, notIn, exists, dne, gt, lt, opGte, opLte}
	matched := 0
	const n = 5000
	for range n {
		term := make([]corev1.NodeSelectorRequirement, 1+rng.IntN(4))
		for i := range term {
			op := ops[rng.IntN(len(ops))]
			var vals []string
			switch op {
			case in, notIn:
				for range 1 + rng.IntN(3) {
					vals = append(vals, values[rng.IntN(len(values))])
				}
			case gt, lt, opGte, opLte:
				vals = []string{values[3+rng.IntN(3)]}
			}
			term[i] = corev1.NodeSelectorRequirement{Key: keys[rng.IntN(len(keys))], Operator: op, Values: vals}
		}
		labels := map[string]string{}
		for _, key := range keys {
			if rng.IntN(3) > 0 {
				labels[key] = labelValues[rng.IntN(len(labelValues))]
			}
		}
		checkAgainstKube(t, term, labels)
		if kubeMatches(t, term, labels) {
			matched++
		}
	}
	// Guard against a generator that only ever tests one outcome.
	if matched < n/10 || matched > n*9/10 {
		t.Errorf("%d of %d random cases matched; the generator is lopsided", matched, n)
	}
	t.Logf("%d of %d random cases matched", matched, n)
}
