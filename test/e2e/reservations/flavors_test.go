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

// openModel creates an OpenModel with flavors t4g then t4, one GPU each,
// for np's scenario.
func openModel(t *testing.T, np *v1.NodePool) string {
	return createModel(t, np,
		map[string]any{"name": "t4g", "requests": map[string]any{"nvidia.com/gpu": "1"}, "nodeSelector": map[string]any{v1.LabelInstanceGPUName: "t4g"}},
		map[string]any{"name": "t4", "limits": map[string]any{"nvidia.com/gpu": "1"}, "nodeSelector": map[string]any{v1.LabelInstanceGPUName: "t4"}})
}

// createModel creates an OpenModel with the flavors given for np's
// scenario.
func createModel(t *testing.T, np *v1.NodePool, flavorList ...any) string {
	name := test.RandomName("model")
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "llmaz.io/v1alpha1", "kind": "OpenModel", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"inferenceConfig": map[string]any{"flavors": flavorList}},
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

// fitFlavor checks that every registered NodeClaim of np requests gpus
// GPUs and its node has room for them: the flavor's resources sized it.
func fitFlavor(g gomega.Gomega, np *v1.NodePool, gpus int64) {
	for _, nc := range claimsOf(g, np) {
		if nc.Status.NodeName == "" {
			continue
		}
		want := *resource.NewQuantity(gpus, resource.DecimalSI)
		requested := nc.Spec.Resources.Requests["nvidia.com/gpu"]
		g.Expect(requested.Cmp(want)).To(gomega.Equal(0), "nodeclaim %s requests %s GPUs, want %s", nc.Name, requested.String(), want.String())
		allocatable := nc.Status.Allocatable["nvidia.com/gpu"]
		g.Expect(allocatable.Cmp(want)).To(gomega.BeNumerically(">=", 0), "node %s has %s GPUs, the flavor needs %s", nc.Status.NodeName, allocatable.String(), want.String())
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
		fitFlavor(g, np, 1)
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	checkParity(t, np)
}

// A flavor needing two GPUs sizes the node it launches: a 2-GPU t4g
// (g5g.16xlarge), not the 1-GPU one the pod alone would fit
// (docs/gpu-flavors.md, "Flavor resources").
func TestFlavorResourcesSizeTheNode(t *testing.T) {
	g := test.NewGomega(t)
	ns, np := gpuPool(t, "g5g.xlarge", "g5g.16xlarge")
	model := createModel(t, np,
		map[string]any{"name": "t4g", "limits": map[string]any{"nvidia.com/gpu": int64(2)}, "nodeSelector": map[string]any{v1.LabelInstanceGPUName: "t4g"}})
	create(t, np, gpuPod(ns, serving(model, "t4g")))
	g.Eventually(func(g gomega.Gomega) {
		claims := claimsOf(g, np)
		g.Expect(claims).To(gomega.HaveLen(1))
		g.Expect(claims[0].Labels[v1.LabelInstanceType]).To(gomega.Equal("g5g.16xlarge"))
		g.Expect(claims[0].Annotations["capstan.dev/flavor"]).To(gomega.Equal("t4g (1 of 1)"))
		g.Expect(claims[0].Status.NodeName).NotTo(gomega.BeEmpty())
		fitFlavor(g, np, 2)
		g.Expect(test.RunningPods(cluster.Client, ns)).To(gomega.HaveLen(1))
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
		fitFlavor(g, np, 1)
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
