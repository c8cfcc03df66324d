package flavors

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// quantityEqual compares quantities by value: parsed and constructed
// quantities differ in unexported caches.
func quantityEqual() cmp.Option {
	return cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
}

func openModel(name string, spec any) *unstructured.Unstructured {
	obj := map[string]any{
		"apiVersion": "llmaz.io/v1alpha1",
		"kind":       "OpenModel",
		"metadata":   map[string]any{"name": name},
	}
	if spec != nil {
		obj["spec"] = spec
	}
	return &unstructured.Unstructured{Object: obj}
}

func withFlavors(flavors ...any) map[string]any {
	return map[string]any{"inferenceConfig": map[string]any{"flavors": flavors}}
}

func TestFromUnstructuredSeedYAML(t *testing.T) {
	// The OpenModel from seed 001, decoded the way the API client does.
	const doc = `
apiVersion: llmaz.io/v1alpha1
kind: OpenModel
metadata:
  name: qwen2-0--5b
spec:
  familyName: qwen2
  source:
    modelHub:
      modelID: Qwen/Qwen2-0.5B-Instruct
  inferenceConfig:
    flavors:
    - name: t4g
      limits:
        nvidia.com/gpu: 1
      nodeSelector:
        karpenter.k8s.aws/instance-gpu-name: t4g
    - name: t4
      limits:
        nvidia.com/gpu: 1
      nodeSelector:
        karpenter.k8s.aws/instance-gpu-name: t4
`
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	got, err := FromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	want := &OpenModel{Name: "qwen2-0--5b", Flavors: []Flavor{
		{Name: "t4g", NodeSelector: map[string]string{"karpenter.k8s.aws/instance-gpu-name": "t4g"}, Requests: gpu},
		{Name: "t4", NodeSelector: map[string]string{"karpenter.k8s.aws/instance-gpu-name": "t4"}, Requests: gpu},
	}}
	if diff := cmp.Diff(want, got, quantityEqual()); diff != "" {
		t.Errorf("FromUnstructured (-want +got):\n%s", diff)
	}
}

// res is a resource list from name, quantity pairs.
func res(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestFromUnstructured(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    *unstructured.Unstructured
		want *OpenModel
	}{{
		name: "no spec",
		u:    openModel("m", nil),
		want: &OpenModel{Name: "m"},
	}, {
		name: "no inferenceConfig",
		u:    openModel("m", map[string]any{"familyName": "qwen2"}),
		want: &OpenModel{Name: "m"},
	}, {
		name: "null flavors",
		u:    openModel("m", map[string]any{"inferenceConfig": map[string]any{"flavors": nil}}),
		want: &OpenModel{Name: "m"},
	}, {
		name: "requests only",
		u:    openModel("m", withFlavors(map[string]any{"name": "a", "requests": map[string]any{"nvidia.com/gpu": int64(2)}})),
		want: &OpenModel{Name: "m", Flavors: []Flavor{{Name: "a", Requests: res("nvidia.com/gpu", "2")}}},
	}, {
		name: "limits only",
		u:    openModel("m", withFlavors(map[string]any{"name": "a", "limits": map[string]any{"memory": "16Gi"}})),
		want: &OpenModel{Name: "m", Flavors: []Flavor{{Name: "a", Requests: res("memory", "16Gi")}}},
	}, {
		name: "requests preferred over limits, which is not even read",
		u: openModel("m", withFlavors(map[string]any{
			"name":     "a",
			"requests": map[string]any{"nvidia.com/gpu": "1"},
			"limits":   map[string]any{"nvidia.com/gpu": "bogus"},
		})),
		want: &OpenModel{Name: "m", Flavors: []Flavor{{Name: "a", Requests: res("nvidia.com/gpu", "1")}}},
	}, {
		name: "neither requests nor limits",
		u:    openModel("m", withFlavors(map[string]any{"name": "a"})),
		want: &OpenModel{Name: "m", Flavors: []Flavor{{Name: "a"}}},
	}, {
		name: "numeric forms",
		u: openModel("m", withFlavors(map[string]any{"name": "a", "requests": map[string]any{
			"cpu": 0.5, "memory": 1024, "nvidia.com/gpu": int32(1), "ephemeral-storage": "1Gi",
		}})),
		want: &OpenModel{Name: "m", Flavors: []Flavor{{Name: "a", Requests: res(
			"cpu", "500m", "memory", "1024", "nvidia.com/gpu", "1", "ephemeral-storage", "1Gi",
		)}}},
	}, {
		name: "empty nodeSelector and resources, unknown fields ignored, order kept",
		u: openModel("m", withFlavors(
			map[string]any{"name": "b", "nodeSelector": map[string]any{}, "requests": map[string]any{}, "params": map[string]any{"x": "y"}},
			map[string]any{"name": "a", "nodeSelector": map[string]any{"zone": "z1", "gpu": "t4"}},
		)),
		want: &OpenModel{Name: "m", Flavors: []Flavor{
			{Name: "b"},
			{Name: "a", NodeSelector: map[string]string{"zone": "z1", "gpu": "t4"}},
		}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromUnstructured(tc.u)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, quantityEqual()); diff != "" {
				t.Errorf("FromUnstructured (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromUnstructuredErrors(t *testing.T) {
	wrongKind := openModel("m", nil)
	wrongKind.SetKind("Playground")
	wrongVersion := openModel("m", nil)
	wrongVersion.SetAPIVersion("llmaz.io/v1beta1")
	wrongGroup := openModel("m", nil)
	wrongGroup.SetAPIVersion("inference.llmaz.io/v1alpha1")
	for _, tc := range []struct {
		name string
		u    *unstructured.Unstructured
		want string
	}{
		{"nil", nil, "decoding openmodel: object is nil"},
		{"wrong kind", wrongKind, `decoding openmodel m: apiVersion/kind is "llmaz.io/v1alpha1"/"Playground", want "llmaz.io/v1alpha1"/"OpenModel"`},
		{"wrong version", wrongVersion, `apiVersion/kind is "llmaz.io/v1beta1"/"OpenModel"`},
		{"wrong group", wrongGroup, `apiVersion/kind is "inference.llmaz.io/v1alpha1"/"OpenModel"`},
		{"no name", openModel("", nil), "decoding openmodel: metadata.name is missing"},
		{"spec not an object", openModel("m", []any{}), "decoding openmodel m: spec, is a list, want an object"},
		{"inferenceConfig not an object", openModel("m", map[string]any{"inferenceConfig": "x"}),
			"decoding openmodel m: spec.inferenceConfig, is a string, want an object"},
		{"flavors not a list", openModel("m", map[string]any{"inferenceConfig": map[string]any{"flavors": map[string]any{"name": "a"}}}),
			"decoding openmodel m: spec.inferenceConfig.flavors, is an object, want a list"},
		{"flavor not an object", openModel("m", withFlavors("a")),
			"decoding openmodel m: spec.inferenceConfig.flavors[0], is a string, want an object"},
		{"name missing", openModel("m", withFlavors(map[string]any{"name": "a"}, map[string]any{"nodeSelector": map[string]any{}})),
			"decoding openmodel m: spec.inferenceConfig.flavors[1].name, is missing"},
		{"name empty", openModel("m", withFlavors(map[string]any{"name": ""})),
			"spec.inferenceConfig.flavors[0].name, is empty"},
		{"name not a string", openModel("m", withFlavors(map[string]any{"name": int64(3)})),
			"spec.inferenceConfig.flavors[0].name, is a number, want a string"},
		{"name repeated", openModel("m", withFlavors(map[string]any{"name": "a"}, map[string]any{"name": "b"}, map[string]any{"name": "a"})),
			`spec.inferenceConfig.flavors[2].name, "a" repeats flavors[0]`},
		{"nodeSelector not an object", openModel("m", withFlavors(map[string]any{"name": "a", "nodeSelector": []any{"x"}})),
			"spec.inferenceConfig.flavors[0].nodeSelector, is a list, want an object"},
		{"nodeSelector value not a string", openModel("m", withFlavors(map[string]any{"name": "a", "nodeSelector": map[string]any{"gpu-count": int64(1)}})),
			`spec.inferenceConfig.flavors[0].nodeSelector["gpu-count"], is a number, want a string`},
		{"nodeSelector key invalid", openModel("m", withFlavors(map[string]any{"name": "a", "nodeSelector": map[string]any{"a b": "x"}})),
			`spec.inferenceConfig.flavors[0].nodeSelector["a b"], invalid label key`},
		{"nodeSelector value invalid", openModel("m", withFlavors(map[string]any{"name": "a", "nodeSelector": map[string]any{"gpu": "t4 g"}})),
			`spec.inferenceConfig.flavors[0].nodeSelector["gpu"], invalid label value "t4 g"`},
		{"requests not an object", openModel("m", withFlavors(map[string]any{"name": "a", "requests": "1"})),
			"spec.inferenceConfig.flavors[0].requests, is a string, want an object"},
		{"requests quantity unparsable", openModel("m", withFlavors(map[string]any{"name": "a", "requests": map[string]any{"nvidia.com/gpu": "one"}})),
			`decoding openmodel m: spec.inferenceConfig.flavors[0].requests["nvidia.com/gpu"], parsing quantity "one", quantities must match`},
		{"limits quantity unparsable", openModel("m", withFlavors(map[string]any{"name": "a", "limits": map[string]any{"memory": "16GB"}})),
			`spec.inferenceConfig.flavors[0].limits["memory"], parsing quantity "16GB"`},
		{"limits quantity wrong type", openModel("m", withFlavors(map[string]any{"name": "a", "limits": map[string]any{"memory": true}})),
			`spec.inferenceConfig.flavors[0].limits["memory"], is a boolean, want a quantity string or number`},
		{"negative quantity", openModel("m", withFlavors(map[string]any{"name": "a", "requests": map[string]any{"cpu": "-1"}})),
			`spec.inferenceConfig.flavors[0].requests["cpu"], quantity "-1" is negative`},
		{"resource name invalid", openModel("m", withFlavors(map[string]any{"name": "a", "limits": map[string]any{"nvidia.com/gpu count": "1"}})),
			`spec.inferenceConfig.flavors[0].limits, "nvidia.com/gpu count" is not a resource name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromUnstructured(tc.u)
			if err == nil {
				t.Fatalf("FromUnstructured = %+v, want error containing %q", got, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("FromUnstructured error = %q, want it to contain %q", err, tc.want)
			}
			if !IsInvalidModel(err) {
				t.Errorf("IsInvalidModel(%q) = false", err)
			}
		})
	}
}
