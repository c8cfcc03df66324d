package simulator

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/manifests"
)

func TestWorldListsPodsInCreationOrder(t *testing.T) {
	w := newWorld(&manifests.Set{})
	for _, name := range []string{"c", "a", "b"} {
		p := &corev1.Pod{}
		p.Name, p.Namespace = name, "team"
		w.addPod(p)
	}
	objs := w.objects()
	var got []string
	for _, p := range objs.Pods {
		got = append(got, p.Name)
	}
	if len(got) != 3 || got[0] != "c" || got[2] != "b" {
		t.Errorf("pods %v, want creation order c, a, b", got)
	}
	if len(objs.Namespaces) != 1 || objs.Namespaces[0].Labels[corev1.LabelMetadataName] != "team" {
		t.Errorf("namespaces %v: a pod's namespace exists, labelled with its name", objs.Namespaces)
	}
}

func TestOpenModelsAreInstalledOnlyWhenTheManifestsHaveOne(t *testing.T) {
	w := newWorld(&manifests.Set{})
	if _, installed, _ := w.model(context.Background(), "llama"); installed {
		t.Error("llmaz counts as installed with no OpenModel in the manifests")
	}
	w = newWorld(&manifests.Set{OpenModels: []*flavors.OpenModel{{Name: "qwen"}}})
	if m, installed, err := w.model(context.Background(), "qwen"); !installed || err != nil || m.Name != "qwen" {
		t.Errorf("qwen: %v %v %v", m, installed, err)
	}
	if _, installed, err := w.model(context.Background(), "llama"); !installed || err == nil {
		t.Error("a model missing from the manifests is not an error")
	}
	if _, err := w.SimNodeClass(context.Background(), "missing"); err == nil {
		t.Error("a missing SimNodeClass is not an error")
	}
}
