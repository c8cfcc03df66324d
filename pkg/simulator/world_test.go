package simulator

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
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
	serving := func(model string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{flavors.ModelNameLabelKey: model}}}
	}
	pods := []*corev1.Pod{serving("qwen"), serving("llama")}
	w := newWorld(&manifests.Set{})
	if _, installed, _ := w.openModels(pods).Lookup("llama"); installed {
		t.Error("llmaz counts as installed with no OpenModel in the manifests")
	}
	w = newWorld(&manifests.Set{OpenModels: []*flavors.OpenModel{{Name: "qwen"}}})
	if m, installed, err := w.openModels(pods).Lookup("qwen"); !installed || err != nil || m.Name != "qwen" {
		t.Errorf("qwen: %v %v %v", m, installed, err)
	}
	if _, installed, err := w.openModels(pods).Lookup("llama"); !installed || err == nil {
		t.Error("a model missing from the manifests is not an error")
	}
	if _, err := w.SimNodeClass(context.Background(), "missing"); err == nil {
		t.Error("a missing SimNodeClass is not an error")
	}
}

// TestWorldIndexesPodsByNode: a node's pods and a NodeClaim's Node come
// from indexes kept by every change, in creation order.
func TestWorldIndexesPodsByNode(t *testing.T) {
	w := newWorld(&manifests.Set{})
	pods := map[string]*corev1.Pod{}
	for _, name := range []string{"c", "a", "b", "d"} {
		p := &corev1.Pod{}
		p.Name, p.Namespace = name, "team"
		if name == "d" {
			p.Spec.NodeName = "n1"
		}
		w.addPod(p)
		pods[name] = p
	}
	w.bindPod(pods["b"], "n1")
	w.bindPod(pods["c"], "n1")
	w.bindPod(pods["a"], "n2")
	podNames := func(ps []*corev1.Pod) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	if diff := cmp.Diff([]string{"c", "b", "d"}, podNames(w.podsOn("n1"))); diff != "" {
		t.Errorf("pods on n1 (-want +got):\n%s", diff)
	}
	w.deletePod(pods["b"])
	w.deletePod(pods["a"])
	if diff := cmp.Diff([]string{"c", "d"}, podNames(w.podsOn("n1"))); diff != "" {
		t.Errorf("pods on n1 after deleting b (-want +got):\n%s", diff)
	}
	if got := w.podsOn("n2"); len(got) != 0 {
		t.Errorf("pods on n2 after deleting its only pod: %v", podNames(got))
	}
	if diff := cmp.Diff([]string{"c", "d"}, podNames(w.sortedPods())); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}

	node := &corev1.Node{}
	node.Name, node.Spec.ProviderID = "n1", "sim://i-1"
	w.setNode(node)
	nc := &v1.NodeClaim{}
	nc.Status.ProviderID = "sim://i-1"
	if got := w.nodeOf(nc); got != node {
		t.Errorf("node of the claim %v, want n1", got)
	}
	w.deleteNode(node)
	if got := w.nodeOf(nc); got != nil {
		t.Errorf("node of the claim %v after the node was deleted", got)
	}
}

func TestWorldCountsPendingPodsAsTheyComeBindAndGo(t *testing.T) {
	w := newWorld(&manifests.Set{})
	pod := func(name, node string) *corev1.Pod {
		p := &corev1.Pod{}
		p.Name, p.Namespace, p.Spec.NodeName = name, "team", node
		return p
	}
	a, b, c := pod("a", ""), pod("b", ""), pod("c", "n1")
	for _, p := range []*corev1.Pod{a, b, c} {
		w.addPod(p)
	}
	w.bindPod(a, "n1")
	w.deletePod(b)
	w.deletePod(b)
	w.addPod(pod("d", ""))
	if w.pending != 1 {
		t.Errorf("pending %d, want 1: d (a bound, b deleted, c bound from the start)", w.pending)
	}
}
