package flavors

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/pkg/scheduling"
)

const gpuKey = "karpenter.k8s.aws/instance-gpu-name"

func in(key string, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}

func term(exprs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: exprs}
}

// testModel has flavors in a deliberate order: "any" selects no labels and
// "t4" has two keys to show sorting.
func testModel() *OpenModel {
	return &OpenModel{Name: "qwen", Flavors: []Flavor{
		{Name: "a100", NodeSelector: map[string]string{gpuKey: "a100"}, Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
		{Name: "t4", NodeSelector: map[string]string{gpuKey: "t4", "karpenter.k8s.aws/instance-gpu-count": "1"}},
		{Name: "l4", NodeSelector: map[string]string{gpuKey: "l4"}},
		{Name: "any"},
	}}
}

func manyFlavors(n int) *OpenModel {
	m := &OpenModel{Name: "qwen"}
	for i := range n {
		name := fmt.Sprintf("f%d", i)
		m.Flavors = append(m.Flavors, Flavor{Name: name, NodeSelector: map[string]string{gpuKey: name}})
	}
	return m
}

type podOption func(*corev1.Pod)

func flavorsAnnotation(v string) podOption {
	return func(p *corev1.Pod) { p.Annotations = map[string]string{FlavorsAnnotationKey: v} }
}

func required(terms ...corev1.NodeSelectorTerm) podOption {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
}

func modelPod(opts ...podOption) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{ModelNameLabelKey: "qwen"}},
		Spec:       corev1.PodSpec{NodeSelector: map[string]string{"team": "ml"}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func cloneModel(m *OpenModel) *OpenModel {
	out := &OpenModel{Name: m.Name}
	for _, f := range m.Flavors {
		c := Flavor{Name: f.Name, Requests: f.Requests.DeepCopy()}
		if f.NodeSelector != nil {
			c.NodeSelector = make(map[string]string, len(f.NodeSelector))
			for k, v := range f.NodeSelector {
				c.NodeSelector[k] = v
			}
		}
		out.Flavors = append(out.Flavors, c)
	}
	return out
}

func TestResolveWithNames(t *testing.T) {
	a100 := in(gpuKey, "a100")
	t4 := []corev1.NodeSelectorRequirement{in("karpenter.k8s.aws/instance-gpu-count", "1"), in(gpuKey, "t4")}
	l4 := in(gpuKey, "l4")
	zoneA := in("topology.kubernetes.io/zone", "a")
	spot := in("karpenter.sh/capacity-type", "spot")
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		model     *OpenModel
		wantTerms []corev1.NodeSelectorTerm
		wantNames []string
	}{{
		name:      "model order; the empty selector is an empty term",
		pod:       modelPod(),
		model:     testModel(),
		wantTerms: []corev1.NodeSelectorTerm{term(a100), term(t4...), term(l4), {}},
		wantNames: []string{"a100", "t4", "l4", "any"},
	}, {
		name:      "annotation selects a reordered subset",
		pod:       modelPod(flavorsAnnotation("l4,a100")),
		model:     testModel(),
		wantTerms: []corev1.NodeSelectorTerm{term(l4), term(a100)},
		wantNames: []string{"l4", "a100"},
	}, {
		name:      "whitespace around names is trimmed",
		pod:       modelPod(flavorsAnnotation(" t4 ,\tl4\n")),
		model:     testModel(),
		wantTerms: []corev1.NodeSelectorTerm{term(t4...), term(l4)},
		wantNames: []string{"t4", "l4"},
	}, {
		name:      "flavor-major AND with two existing terms, flavor first",
		pod:       modelPod(flavorsAnnotation("l4,a100"), required(term(zoneA), term(spot))),
		model:     testModel(),
		wantTerms: []corev1.NodeSelectorTerm{term(l4, zoneA), term(l4, spot), term(a100, zoneA), term(a100, spot)},
		wantNames: []string{"l4", "l4", "a100", "a100"},
	}, {
		name:      "an empty selector leaves each existing term as is",
		pod:       modelPod(flavorsAnnotation("any,l4"), required(term(zoneA), term(spot))),
		model:     testModel(),
		wantTerms: []corev1.NodeSelectorTerm{term(zoneA), term(spot), term(l4, zoneA), term(l4, spot)},
		wantNames: []string{"any", "any", "l4", "l4"},
	}, {
		name:      "a conflicting existing term is kept as a conjunction",
		pod:       modelPod(flavorsAnnotation("a100"), required(term(in(gpuKey, "t4")))),
		model:     testModel(),
		wantTerms: []corev1.NodeSelectorTerm{term(a100, in(gpuKey, "t4"))},
		wantNames: []string{"a100"},
	}, {
		name: "match fields are kept",
		pod: modelPod(flavorsAnnotation("l4"), required(corev1.NodeSelectorTerm{
			MatchFields: []corev1.NodeSelectorRequirement{in("metadata.name", "n1")},
		})),
		model: testModel(),
		wantTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{l4},
			MatchFields:      []corev1.NodeSelectorRequirement{in("metadata.name", "n1")},
		}},
		wantNames: []string{"l4"},
	}, {
		name:  "a model without flavors and a pod without terms: nil",
		pod:   modelPod(),
		model: &OpenModel{Name: "qwen"},
	}, {
		name:      "a model without flavors keeps the pod's terms",
		pod:       modelPod(required(term(zoneA), term(spot))),
		model:     &OpenModel{Name: "qwen"},
		wantTerms: []corev1.NodeSelectorTerm{term(zoneA), term(spot)},
		wantNames: []string{"", ""},
	}, {
		name:      "the limit applies to the chosen order, not the model",
		pod:       modelPod(flavorsAnnotation("f9,f0")),
		model:     manyFlavors(10),
		wantTerms: []corev1.NodeSelectorTerm{term(in(gpuKey, "f9")), term(in(gpuKey, "f0"))},
		wantNames: []string{"f9", "f0"},
	}, {
		name:      "exactly MaxFlavors in model order",
		pod:       modelPod(),
		model:     manyFlavors(MaxFlavors),
		wantTerms: []corev1.NodeSelectorTerm{term(in(gpuKey, "f0")), term(in(gpuKey, "f1")), term(in(gpuKey, "f2")), term(in(gpuKey, "f3")), term(in(gpuKey, "f4")), term(in(gpuKey, "f5")), term(in(gpuKey, "f6")), term(in(gpuKey, "f7"))},
		wantNames: []string{"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pod, model := tc.pod.DeepCopy(), cloneModel(tc.model)
			terms, names, err := ResolveWithNames(tc.pod, tc.model)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantTerms, terms); diff != "" {
				t.Errorf("terms (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNames, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			only, err := Resolve(tc.pod, tc.model)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(terms, only); diff != "" {
				t.Errorf("Resolve differs from ResolveWithNames (-with names +without):\n%s", diff)
			}
			// The result shares no memory with the inputs.
			for i := range terms {
				for j := range terms[i].MatchExpressions {
					terms[i].MatchExpressions[j].Key = "scribbled"
					terms[i].MatchExpressions[j].Values[0] = "scribbled"
				}
				for j := range terms[i].MatchFields {
					terms[i].MatchFields[j].Values[0] = "scribbled"
				}
			}
			if diff := cmp.Diff(pod, tc.pod); diff != "" {
				t.Errorf("pod changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(model, tc.model, quantityEqual()); diff != "" {
				t.Errorf("model changed (-before +after):\n%s", diff)
			}
			if again, _, _ := ResolveWithNames(tc.pod, tc.model); !cmp.Equal(tc.wantTerms, again) {
				t.Errorf("a second call returned %v, want %v", again, tc.wantTerms)
			}
		})
	}
}

// TestEmptyTermMatchesAnyNode pins the contract with the solver: a flavor
// without a nodeSelector, on a pod without required terms, yields a term
// that Capstan's requirements algebra matches against every node, while a
// conflicting conjunction matches none.
func TestEmptyTermMatchesAnyNode(t *testing.T) {
	terms, names, err := ResolveWithNames(modelPod(flavorsAnnotation("any,a100")), testModel())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"any", "a100"}, names); diff != "" {
		t.Fatalf("names (-want +got):\n%s", diff)
	}
	anyTerm := scheduling.NewNodeSelectorRequirements(terms[0].MatchExpressions...)
	for _, labels := range []map[string]string{nil, {gpuKey: "t4"}, {"team": "ml", gpuKey: "a100"}} {
		if err := anyTerm.Matches(labels); err != nil {
			t.Errorf("the empty-selector term does not match node labels %v: %v", labels, err)
		}
	}

	terms, err = Resolve(modelPod(flavorsAnnotation("a100"), required(term(in(gpuKey, "t4")))), testModel())
	if err != nil {
		t.Fatal(err)
	}
	conflict := scheduling.NewNodeSelectorRequirements(terms[0].MatchExpressions...)
	for _, gpu := range []string{"a100", "t4"} {
		if conflict.Matches(map[string]string{gpuKey: gpu}) == nil {
			t.Errorf("the conflicting conjunction matches a %s node", gpu)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	noLabel := modelPod()
	noLabel.Labels = nil
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		model *OpenModel
		want  string
	}{
		{"nil pod", nil, testModel(), "pod and model are required"},
		{"nil model", modelPod(), nil, "pod and model are required"},
		{"no model label", noLabel, testModel(), "resolving inference flavors for pod ns/p, it has no label llmaz.io/model-name"},
		{"another model", modelPod(), &OpenModel{Name: "llama"}, `label llmaz.io/model-name is "qwen", want OpenModel "llama"`},
		{"empty annotation", modelPod(flavorsAnnotation("")), testModel(), `annotation llmaz.io/inference-service-flavors="", entry 0 is empty`},
		{"blank annotation", modelPod(flavorsAnnotation("  ")), testModel(), "entry 0 is empty"},
		{"empty middle entry", modelPod(flavorsAnnotation("a100,,t4")), testModel(), "entry 1 is empty"},
		{"trailing comma", modelPod(flavorsAnnotation("a100, ")), testModel(), "entry 1 is empty"},
		{"duplicate", modelPod(flavorsAnnotation("a100,t4,a100")), testModel(), `flavor "a100" is repeated`},
		{"duplicate after trimming", modelPod(flavorsAnnotation("t4, t4")), testModel(), `flavor "t4" is repeated`},
		{"too many in the annotation", modelPod(flavorsAnnotation("f0,f1,f2,f3,f4,f5,f6,f7,f8")), manyFlavors(10),
			"resolving inference flavors for pod ns/p, annotation llmaz.io/inference-service-flavors names 9 flavors, at most 8 are allowed"},
		{"too many in model order", modelPod(), manyFlavors(MaxFlavors + 1),
			"resolving inference flavors for pod ns/p, OpenModel qwen has 9 flavors, at most 8 are tried; select at most 8 with annotation llmaz.io/inference-service-flavors"},
		{"model with a repeated flavor", modelPod(), &OpenModel{Name: "qwen", Flavors: []Flavor{{Name: "a"}, {Name: "a"}}},
			`OpenModel qwen defines flavor "a" twice`},
		{"model with an unnamed flavor", modelPod(), &OpenModel{Name: "qwen", Flavors: []Flavor{{Name: "a"}, {}}},
			"OpenModel qwen flavors[1] has no name"},
		{"required affinity without terms", modelPod(required()), testModel(),
			"resolving inference flavors for pod ns/p, required node affinity has no terms and matches no node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			terms, names, err := ResolveWithNames(tc.pod, tc.model)
			if err == nil {
				t.Fatalf("ResolveWithNames = %v, %v, want error containing %q", terms, names, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to contain %q", err, tc.want)
			}
			if IsUnknownFlavor(err) {
				t.Errorf("IsUnknownFlavor(%q) = true", err)
			}
		})
	}
}

func TestUnknownFlavor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		model *OpenModel
		want  *UnknownFlavorError
		msg   string
	}{{
		name:  "lists the known flavors in model order",
		pod:   modelPod(flavorsAnnotation("t4, h100 ,a100")),
		model: testModel(),
		want:  &UnknownFlavorError{Pod: "ns/p", Model: "qwen", Flavor: "h100", Known: []string{"a100", "t4", "l4", "any"}},
		msg:   `pod ns/p annotation llmaz.io/inference-service-flavors names flavor "h100", which OpenModel qwen does not define; known flavors: a100, t4, l4, any`,
	}, {
		name:  "a model without flavors",
		pod:   modelPod(flavorsAnnotation("a100")),
		model: &OpenModel{Name: "qwen"},
		want:  &UnknownFlavorError{Pod: "ns/p", Model: "qwen", Flavor: "a100", Known: []string{}},
		msg:   `pod ns/p annotation llmaz.io/inference-service-flavors names flavor "a100", which OpenModel qwen does not define; it defines no flavors, so remove the annotation`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(tc.pod, tc.model)
			if !IsUnknownFlavor(err) || !IsUnknownFlavor(fmt.Errorf("wrapped, %w", err)) {
				t.Fatalf("IsUnknownFlavor(%v) = false", err)
			}
			var got *UnknownFlavorError
			if !errors.As(err, &got) {
				t.Fatalf("error %T is not an *UnknownFlavorError", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("UnknownFlavorError (-want +got):\n%s", diff)
			}
			if err.Error() != tc.msg {
				t.Errorf("message = %q, want %q", err, tc.msg)
			}
		})
	}
	if IsUnknownFlavor(nil) || IsUnknownFlavor(errors.New("x")) {
		t.Error("IsUnknownFlavor is true for an unrelated error")
	}
}
