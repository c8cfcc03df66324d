package clusterstate_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/test"
)

// getCounter counts the reads that reach the API server.
type getCounter struct {
	client.Reader
	gets atomic.Int32
}

func (c *getCounter) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets.Add(1)
	return c.Reader.Get(ctx, key, obj, opts...)
}

// Without llmaz's CRD model-serving pods are plain pods; with it, each
// OpenModel the pods name is read once, and one that does not exist is
// reported with why.
func TestOpenModelsAreReadOncePerBatch(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	serving := func(model string) *corev1.Pod {
		return test.Pod("default", func(p *corev1.Pod) { p.Labels = map[string]string{flavors.ModelNameLabelKey: model} })
	}
	pods := []*corev1.Pod{serving("llama"), test.Pod("default"), serving("gpt"), serving("llama")}
	if m := clusterstate.OpenModels(ctx, env.Client, env.Client.RESTMapper(), pods); m.Installed {
		t.Fatalf("llmaz counts as installed without its CRD: %+v", m)
	}

	crd, err := test.ReadManifests("test/e2e/reservations/testdata/openmodel-crd.yaml")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(crd).To(gomega.HaveLen(1))
	g.Expect(env.Client.Create(ctx, crd[0].Object)).To(gomega.Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, crd[0].Object) })
	model := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"inferenceConfig": map[string]any{"flavors": []any{
		map[string]any{"name": "a10g", "nodeSelector": map[string]any{"karpenter.k8s.aws/instance-gpu-name": "a10g"}},
	}}}}}
	model.SetGroupVersionKind(flavors.OpenModelGVK)
	model.SetName("llama")
	g.Eventually(func() error { return env.Client.Create(ctx, model) }).Should(gomega.Succeed())

	reader := &getCounter{Reader: env.Client}
	var m flavors.Models
	g.Eventually(func() bool {
		reader.gets.Store(0)
		m = clusterstate.OpenModels(ctx, reader, env.Client.RESTMapper(), pods)
		return m.Installed
	}).Should(gomega.BeTrue())
	if got := reader.gets.Load(); got != 2 {
		t.Errorf("%d reads for two distinct models", got)
	}
	if got, installed, err := m.Lookup("llama"); err != nil || !installed || len(got.Flavors) != 1 || got.Flavors[0].Name != "a10g" {
		t.Errorf("llama: %+v, %v, %v", got, installed, err)
	}
	if _, installed, err := m.Lookup("gpt"); !installed || err == nil {
		t.Errorf("a missing OpenModel is not reported: %v, %v", installed, err)
	}
}
