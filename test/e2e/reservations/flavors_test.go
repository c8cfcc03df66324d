//go:build e2e

package reservations

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/test"
)

func gpuPool(t *testing.T, sizes ...string) (string, *v1.NodePool) {
	return scenario(t, nil, in(v1.LabelInstanceType, sizes...))
}

// openModel creates an OpenModel with flavors t4g then t4 for np's
// scenario.
func openModel(t *testing.T, np *v1.NodePool) string {
	name := test.RandomName("model")
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "llmaz.io/v1alpha1", "kind": "OpenModel", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"inferenceConfig": map[string]any{"flavors": []any{
			map[string]any{"name": "t4g", "requests": map[string]any{"nvidia.com/gpu": "1"}, "nodeSelector": map[string]any{v1.LabelInstanceGPUName: "t4g"}},
			map[string]any{"name": "t4", "requests": map[string]any{"nvidia.com/gpu": "1"}, "nodeSelector": map[string]any{v1.LabelInstanceGPUName: "t4"}},
		}}},
	}}
	create(t, np, u)
	t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), u) })
	return name
}

func gpuPod(ns string, mods ...func(*corev1.Pod)) *corev1.Pod {
	return test.Pod(ns, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		p.Spec.Tolerations = []corev1.Toleration{{Key: "scenario", Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
		for _, m := range mods {
			m(p)
		}
	})
}

func serving(model, annotation string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Labels = map[string]string{flavors.ModelNameLabelKey: model}
		p.Annotations = map[string]string{flavors.FlavorsAnnotationKey: annotation}
	}
}

func gpuOf(g gomega.Gomega, np *v1.NodePool) []string {
	var out []string
	for _, nc := range claimsOf(g, np) {
		if nc.Status.NodeName != "" {
			out = append(out, nc.Labels[v1.LabelInstanceGPUName])
		}
	}
	return out
}

// Seed 001: flavors t4g then t4 → a t4g node.
func TestFlavorsPreferredFirst(t *testing.T) {
	g := test.NewGomega(t)
	ns, np := gpuPool(t, "g5g.xlarge", "g4dn.xlarge")
	model := openModel(t, np)
	create(t, np, gpuPod(ns, serving(model, "t4g,t4")))
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(gpuOf(g, np)).To(gomega.Equal([]string{"t4g"}))
		g.Expect(claimsOf(g, np)[0].Annotations["capstan.dev/flavor"]).To(gomega.Equal("t4g (1 of 2)"))
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	checkParity(t, np)
}

// No t4g capacity at all → the launch fails, and the next flavor, t4, runs.
func TestFlavorsFallBackWhenPreferredIsOut(t *testing.T) {
	g := test.NewGomega(t)
	ns, np := gpuPool(t, "g5g.2xlarge", "g4dn.xlarge")
	model := openModel(t, np)
	create(t, np, gpuPod(ns, serving(model, "t4g,t4")))
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(gpuOf(g, np)).To(gomega.Equal([]string{"t4"}))
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	checkParity(t, np)
}

// An unknown flavor is reported on the pod, and nothing launches.
func TestUnknownFlavor(t *testing.T) {
	g := test.NewGomega(t)
	ns, np := gpuPool(t, "g5g.xlarge", "g4dn.xlarge")
	model := openModel(t, np)
	create(t, np, gpuPod(ns, serving(model, "h100")))
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(podEvents(g, ns)).To(gomega.HaveKey(flavors.ReasonUnknownInferenceFlavor))
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	g.Expect(claimsOf(g, np)).To(gomega.BeEmpty())
	checkParity(t, np)
}

// Without llmaz: two ordered required terms; the first, a10g, is pricier
// than the second, t4, and still wins.
func TestOrderedTermsWithoutLlmaz(t *testing.T) {
	g := test.NewGomega(t)
	ns, np := gpuPool(t, "g5.xlarge", "g4dn.xlarge")
	term := func(gpu string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: v1.LabelInstanceGPUName, Operator: corev1.NodeSelectorOpIn, Values: []string{gpu}}}}
	}
	pod := gpuPod(ns, func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{term("a10g"), term("t4")}}}}
	})
	create(t, np, pod)
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(gpuOf(g, np)).To(gomega.Equal([]string{"a10g"}))
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	checkParity(t, np)
}

// A GPU NodePool tainted nvidia.com/gpu launches nothing for pods that do
// not tolerate the taint.
func TestTaintedGPUNodePool(t *testing.T) {
	g := test.NewGomega(t)
	ns, np := scenarioWith(t, nil, func(np *v1.NodePool) {
		np.Spec.Template.Spec.Taints = append(np.Spec.Template.Spec.Taints, corev1.Taint{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule})
	}, in(v1.LabelInstanceType, "g4dn.xlarge"))
	create(t, np, gpuPod(ns))
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(podEvents(g, ns)).To(gomega.HaveKey("TaintNotTolerated"))
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	g.Expect(claimsOf(g, np)).To(gomega.BeEmpty())
	checkParity(t, np)
}
