package scaleup

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestApplyFlavors(t *testing.T) {
	model := &flavors.OpenModel{Name: "llama", Flavors: []flavors.Flavor{
		{Name: "a10g", NodeSelector: map[string]string{v1.LabelInstanceGPUName: "a10g"}},
		{Name: "t4", NodeSelector: map[string]string{v1.LabelInstanceGPUName: "t4"}},
	}}
	lookup := func(installed bool) flavors.Models {
		if !installed {
			return flavors.Models{}
		}
		return flavors.Models{Installed: true, ByName: map[string]*flavors.OpenModel{"llama": model}, Errs: map[string]error{"gpt": errors.New("not found")}}
	}
	serving := func(name, model, annotation string) *corev1.Pod {
		return test.Pod("default", func(p *corev1.Pod) {
			p.Name = name
			p.Labels = map[string]string{flavors.ModelNameLabelKey: model}
			if annotation != "" {
				p.Annotations = map[string]string{flavors.FlavorsAnnotationKey: annotation}
			}
		})
	}
	plain := test.Pod("default")
	pods := []*corev1.Pod{plain, serving("ordered", "llama", "t4,a10g"), serving("unknown", "llama", "h100"), serving("missing", "gpt", "")}
	kept, resolved, failures := applyFlavors(pods, lookup(true))
	if len(kept) != 2 || kept[0] != plain || kept[1].Name != "ordered" {
		t.Fatalf("kept %v", kept)
	}
	terms := kept[1].Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 2 || terms[0].MatchExpressions[0].Values[0] != "t4" || terms[1].MatchExpressions[0].Values[0] != "a10g" {
		t.Errorf("terms %v, want t4 then a10g", terms)
	}
	if got := resolved.names[kept[1]]; len(got) != 2 || got[0] != "t4" {
		t.Errorf("flavor names %v", got)
	}
	reasons := map[string]string{}
	for _, f := range failures {
		reasons[f.Pod.Name] = f.Reason
	}
	if reasons["unknown"] != flavors.ReasonUnknownInferenceFlavor || reasons["missing"] != "OpenModelNotFound" {
		t.Errorf("failures %v", reasons)
	}

	// Without the llmaz API every pod is provisioned for as it is.
	kept, _, failures = applyFlavors([]*corev1.Pod{serving("x", "llama", "h100")}, lookup(false))
	if len(kept) != 1 || len(failures) != 0 || kept[0].Spec.Affinity != nil {
		t.Errorf("no CRD: kept %v failures %v", kept, failures)
	}
}

// Running model-serving pods get their flavors' terms on copies; the
// objects passed in, and pods whose flavors do not resolve, stay as they
// are.
func TestPinFlavors(t *testing.T) {
	model := &flavors.OpenModel{Name: "llama", Flavors: []flavors.Flavor{
		{Name: "a10g", NodeSelector: map[string]string{v1.LabelInstanceGPUName: "a10g"}},
		{Name: "t4", NodeSelector: map[string]string{v1.LabelInstanceGPUName: "t4"}},
	}}
	lookup := flavors.Models{Installed: true, ByName: map[string]*flavors.OpenModel{"llama": model}, Errs: map[string]error{"gpt": errors.New("not found")}}
	serving := func(name, model string) *corev1.Pod {
		return test.Pod("default", func(p *corev1.Pod) {
			p.Name, p.Spec.NodeName = name, "node-1"
			p.Labels = map[string]string{flavors.ModelNameLabelKey: model}
		})
	}
	plain, llama, gpt := test.Pod("default"), serving("llama", "llama"), serving("gpt", "gpt")
	got, _ := PinFlavors([]*corev1.Pod{plain, llama, gpt}, lookup)
	if len(got) != 3 || got[0] != plain || got[2] != gpt {
		t.Fatalf("pinned %v: the plain pod and the unresolved one must be kept as they are", got)
	}
	if got[1] == llama || llama.Spec.Affinity != nil {
		t.Fatalf("the serving pod was changed in place")
	}
	terms := got[1].Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 2 || terms[0].MatchExpressions[0].Values[0] != "a10g" || terms[1].MatchExpressions[0].Values[0] != "t4" {
		t.Errorf("terms %v, want a10g then t4", terms)
	}
	if out, _ := PinFlavors([]*corev1.Pod{llama}, flavors.Models{}); out[0] != llama {
		t.Errorf("without llmaz the pods are not touched")
	}
}

// A pinned copy's terms are sized by their flavors, as the provisioner
// sizes them, so consolidation moves it only where it would be launched.
func TestPinFlavorsSizes(t *testing.T) {
	pod := servingPod("1")
	pod.Spec.NodeName = "node-1"
	models := flavors.Models{Installed: true, ByName: map[string]*flavors.OpenModel{"llama": sizedModel()}}
	pinned, requests := PinFlavors([]*corev1.Pod{pod}, models)
	var gpus []int64
	for _, r := range requests[pinned[0]] {
		gpus = append(gpus, r.Get(gpu))
	}
	if diff := cmp.Diff([]int64{2, 1}, gpus); diff != "" {
		t.Errorf("GPUs by term (-want +got):\n%s", diff)
	}
}
