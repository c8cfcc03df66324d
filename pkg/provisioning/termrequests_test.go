package provisioning_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Pods sized by term (Input.TermRequests, llmaz flavors) fit each node
// with the term's requests: two alike pods, each asking 2 GPUs by its
// a100 term and 1 by its t4 term, pass over the a100 node with one free
// GPU; the first takes the one with two, the second falls back to the t4
// node. Without the sizes, the two a100 nodes take them.
func TestTermRequests(t *testing.T) {
	gpuNode := func(name, gpuName, gpus string) *provisioning.Node {
		alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
			corev1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse(gpus)}
		return &provisioning.Node{Name: name, Labels: map[string]string{v1.LabelInstanceGPUName: gpuName}, Allocatable: alloc, Capacity: alloc}
	}
	sized := func(cpu string, gpus int64) scheduling.Resources {
		return scheduling.NewResources(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi"),
			"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)})
	}
	for _, tc := range []struct {
		name  string
		sized bool
		// want are the nodes the pods are nominated to, sorted.
		want []string
	}{
		{"the pods' own requests", false, []string{"a100-one", "a100-two"}},
		{"sized by term", true, []string{"a100-two", "t4-one"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oneGPU := func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
			}
			ps := pods(2, "1", "1Gi", oneGPU, requiredTerms(term(v1.LabelInstanceGPUName, "a100"), term(v1.LabelInstanceGPUName, "t4")))
			in := provisioning.Input{Pods: ps, Nodes: []*provisioning.Node{
				gpuNode("a100-one", "a100", "1"), gpuNode("a100-two", "a100", "2"), gpuNode("t4-one", "t4", "1"),
			}}
			if tc.sized {
				in.TermRequests = map[*corev1.Pod][]scheduling.Resources{}
				for _, p := range ps {
					in.TermRequests[p] = []scheduling.Resources{sized("1", 2), sized("1", 1)}
				}
			}
			r := provisioning.Solve(in)
			var got []string
			for _, n := range r.Nominations {
				got = append(got, n.NodeName)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("nominations (-want +got):\n%s\nunplaced: %+v", diff, r.Unplaced)
			}
		})
	}
}
