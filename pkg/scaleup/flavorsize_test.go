package scaleup

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

const gpu corev1.ResourceName = "nvidia.com/gpu"

// gpuType is an instance type with count GPUs named name (a100, t4),
// priced by its GPUs so that a 1-GPU type is cheaper than a 2-GPU one.
func gpuType(name string, count int64) *cloudprovider.InstanceType {
	return test.InstanceType(test.InstanceTypeOptions{
		Name: name, CPU: 8 * count, Memory: 32 * count, Price: float64(count) * 3,
		Extended: corev1.ResourceList{gpu: *resource.NewQuantity(count, resource.DecimalSI)},
		Labels:   map[string]string{v1.LabelInstanceGPUName: name[:len(name)-3]},
	})
}

// sizedModel is seed 001's two-flavor model with different resources: a100
// needs 2 GPUs, t4 one.
func sizedModel() *flavors.OpenModel {
	return &flavors.OpenModel{Name: "llama", Flavors: []flavors.Flavor{
		{Name: "a100", NodeSelector: map[string]string{v1.LabelInstanceGPUName: "a100"}, Requests: corev1.ResourceList{gpu: resource.MustParse("2")}},
		{Name: "t4", NodeSelector: map[string]string{v1.LabelInstanceGPUName: "t4"}, Requests: corev1.ResourceList{gpu: resource.MustParse("1")}},
	}}
}

// pods are serving pods, one per entry: the GPUs each asks.
func pods(gpus ...string) []*corev1.Pod {
	out := make([]*corev1.Pod, len(gpus))
	for i, g := range gpus {
		out[i] = servingPod(g)
		out[i].Name = fmt.Sprintf("serving-%d", i)
	}
	return out
}

// servingPod serves llama from a model-runner container asking gpus
// GPUs (requests and limits, as llmaz renders them) and one core.
func servingPod(gpus string) *corev1.Pod {
	return test.Pod("default", func(p *corev1.Pod) {
		p.Name = "serving"
		p.Labels = map[string]string{flavors.ModelNameLabelKey: "llama"}
		c := &p.Spec.Containers[0]
		c.Name = flavors.ModelRunnerContainerName
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), gpu: resource.MustParse(gpus)}
		c.Resources.Limits = corev1.ResourceList{gpu: resource.MustParse(gpus)}
	})
}

// gpuNode is an existing node, or an in-flight NodeClaim, with one free
// GPU named name.
func gpuNode(name string, inFlight bool) *provisioning.Node {
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods: resource.MustParse("110"), gpu: resource.MustParse("1")}
	return &provisioning.Node{Name: name + "-node", NodePool: "gpu", InFlight: inFlight, Allocatable: alloc, Capacity: alloc,
		Labels: map[string]string{v1.LabelInstanceGPUName: name, v1.LabelInstanceType: name + ".x1", v1.NodePoolLabelKey: "gpu"}}
}

// decided is what a test reads of a decision.
type decided struct {
	// Claims are each NodeClaim's instance-type options, GPUs requested
	// and flavor annotation.
	Claims      []claimSummary
	Nominations []string
	Failures    []string
}

type claimSummary struct {
	Types  []string
	GPUs   string
	Flavor string
}

func summarize(d Decision) decided {
	var out decided
	for i, c := range d.Result.NewNodeClaims {
		s := claimSummary{Flavor: d.NodeClaims[i].Annotations[provisioning.FlavorAnnotationKey]}
		for _, it := range c.InstanceTypes {
			s.Types = append(s.Types, it.Name)
		}
		if q, ok := d.NodeClaims[i].Spec.Resources.Requests[gpu]; ok {
			s.GPUs = q.String()
		}
		out.Claims = append(out.Claims, s)
	}
	for _, n := range d.Result.Nominations {
		out.Nominations = append(out.Nominations, n.NodeName)
	}
	for _, f := range d.FlavorFailures {
		out.Failures = append(out.Failures, f.Reason+": "+f.Err.Error())
	}
	for _, u := range d.Result.Unplaced {
		out.Failures = append(out.Failures, string(u.Reason))
	}
	return out
}

// decodedModel decodes an OpenModel as the controller does, flavors
// given as YAML-decoded maps.
func decodedModel(t *testing.T, flavorList ...any) (*flavors.OpenModel, error) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "llmaz.io/v1alpha1", "kind": "OpenModel", "metadata": map[string]any{"name": "llama"},
		"spec": map[string]any{"inferenceConfig": map[string]any{"flavors": flavorList}},
	}}
	return flavors.FromUnstructured(u)
}

// Each flavor's terms are sized with the flavor's resources, as llmaz
// writes them into the model-runner container: the solver tries flavor i
// with flavor i's requests on existing nodes, in-flight NodeClaims and
// new NodeClaims, and the NodeClaim follows the flavor that won.
func TestDecideSizesFlavors(t *testing.T) {
	a100s := []*cloudprovider.InstanceType{gpuType("a100.x1", 1), gpuType("a100.x2", 2)}
	t4s := []*cloudprovider.InstanceType{gpuType("t4.x1", 1), gpuType("t4.x2", 2)}
	all := append(append([]*cloudprovider.InstanceType{}, a100s...), t4s...)
	limitsModel, err := decodedModel(t,
		map[string]any{"name": "a100", "limits": map[string]any{"nvidia.com/gpu": int64(2)}, "nodeSelector": map[string]any{v1.LabelInstanceGPUName: "a100"}},
		map[string]any{"name": "t4", "requests": map[string]any{"nvidia.com/gpu": "1"}, "nodeSelector": map[string]any{v1.LabelInstanceGPUName: "t4"}})
	if err != nil {
		t.Fatal(err)
	}
	_, decodeErr := decodedModel(t, map[string]any{"name": "a100", "limits": map[string]any{"nvidia.com/gpu": "two"}})
	_, negativeErr := decodedModel(t, map[string]any{"name": "a100", "requests": map[string]any{"nvidia.com/gpu": int64(-2)}})
	handBuilt := sizedModel()
	handBuilt.Flavors[1].Requests[gpu] = resource.MustParse("-1")
	for _, tc := range []struct {
		name  string
		types []*cloudprovider.InstanceType
		nodes []*provisioning.Node
		pods  []*corev1.Pod
		model *flavors.OpenModel
		err   error
		// gpuLimit is the NodePool's nvidia.com/gpu limit, if any.
		gpuLimit string
		want     decided
	}{{
		// The pod as written asks one GPU: the a100 flavor's two size it.
		name: "the first flavor's 2 GPUs pick a 2-GPU node", types: all, pods: pods("1"), model: sizedModel(),
		want: decided{Claims: []claimSummary{{Types: []string{"a100.x2"}, GPUs: "2", Flavor: "a100 (1 of 2)"}}},
	}, {
		// The NodePool's 3 GPUs take one 2-GPU a100 node: the second pod
		// falls back to t4, sized by t4's one GPU.
		name: "2-GPU nodes for the first flavor, 1-GPU nodes falling back", types: all, pods: pods("1", "1"), model: sizedModel(), gpuLimit: "3",
		want: decided{Claims: []claimSummary{
			{Types: []string{"a100.x2"}, GPUs: "2", Flavor: "a100 (1 of 2)"},
			{Types: []string{"t4.x1"}, GPUs: "1", Flavor: "t4 (2 of 2)"},
		}},
	}, {
		name: "an existing 1-GPU a100 node is not used for the 2-GPU flavor", types: all, pods: pods("1"), model: sizedModel(),
		nodes: []*provisioning.Node{gpuNode("a100", false)},
		want:  decided{Claims: []claimSummary{{Types: []string{"a100.x2"}, GPUs: "2", Flavor: "a100 (1 of 2)"}}},
	}, {
		name: "an in-flight 1-GPU a100 NodeClaim is not used for the 2-GPU flavor", types: all, pods: pods("1"), model: sizedModel(),
		nodes: []*provisioning.Node{gpuNode("a100", true)},
		want:  decided{Claims: []claimSummary{{Types: []string{"a100.x2"}, GPUs: "2", Flavor: "a100 (1 of 2)"}}},
	}, {
		// Nothing launches a100s: the existing 1-GPU t4 node fits the t4
		// flavor before a new t4 node is launched.
		name: "an existing 1-GPU t4 node takes the fallen-back pod", types: t4s, pods: pods("1"), model: sizedModel(),
		nodes: []*provisioning.Node{gpuNode("t4", false)},
		want:  decided{Nominations: []string{"t4-node"}},
	}, {
		// As llmaz renders the pod (the first flavor's two GPUs): t4's one
		// GPU does not shrink it, kube-scheduler would bind it by its two.
		name: "a flavor never sizes below the pod's own requests", types: t4s, pods: pods("2"), model: sizedModel(),
		want: decided{Claims: []claimSummary{{Types: []string{"t4.x2"}, GPUs: "2", Flavor: "t4 (2 of 2)"}}},
	}, {
		// `limits` (the seed, llmaz since 2025) and `requests` (earlier
		// llmaz) size alike.
		name: "a flavor's limits size like its requests", types: all, pods: pods("1", "1"), model: limitsModel, gpuLimit: "3",
		want: decided{Claims: []claimSummary{
			{Types: []string{"a100.x2"}, GPUs: "2", Flavor: "a100 (1 of 2)"},
			{Types: []string{"t4.x1"}, GPUs: "1", Flavor: "t4 (2 of 2)"},
		}},
	}, {
		name: "an unparsable quantity is reported on the pod", types: all, pods: pods("1"), err: decodeErr,
		want: decided{Failures: []string{`InvalidOpenModel: decoding openmodel llama: spec.inferenceConfig.flavors[0].limits["nvidia.com/gpu"], parsing quantity "two", quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`}},
	}, {
		name: "a negative quantity is reported on the pod", types: all, pods: pods("1"), err: negativeErr,
		want: decided{Failures: []string{`InvalidOpenModel: decoding openmodel llama: spec.inferenceConfig.flavors[0].requests["nvidia.com/gpu"], quantity "-2" is negative`}},
	}, {
		name: "a hand-built model's negative quantity is reported, not ignored", types: all, pods: pods("1"), model: handBuilt,
		want: decided{Failures: []string{`InvalidOpenModel: resolving inference flavors for pod default/serving-0, OpenModel llama flavor "t4" resources, nvidia.com/gpu quantity -1 is negative`}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			np := test.NodePool(func(np *v1.NodePool) {
				np.Name = "gpu"
				if tc.gpuLimit != "" {
					np.Spec.Limits = v1.Limits{gpu: resource.MustParse(tc.gpuLimit)}
				}
			})
			models := flavors.Models{Installed: true, ByName: map[string]*flavors.OpenModel{}, Errs: map[string]error{}}
			if tc.model != nil {
				models.ByName["llama"] = tc.model
			} else {
				models.Errs["llama"] = tc.err
			}
			snapshot := state.Snapshot{NodePools: map[string]*v1.NodePool{"gpu": np}, Input: provisioning.Input{
				Pods: tc.pods, Nodes: tc.nodes, NodePools: []*v1.NodePool{np},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"gpu": tc.types},
			}}
			d := Decide(snapshot, Options{MaxInstanceTypes: provisioning.DefaultMaxInstanceTypes, Models: models}, func(string) string { return "nc" })
			if diff := cmp.Diff(tc.want, summarize(d)); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// A model that cannot be read for another reason stays OpenModelNotFound.
func TestDecideMissingModel(t *testing.T) {
	np := test.NodePool(func(np *v1.NodePool) { np.Name = "gpu" })
	models := flavors.Models{Installed: true, Errs: map[string]error{"llama": errors.New("openmodel llama is not in the manifests")}}
	snapshot := state.Snapshot{NodePools: map[string]*v1.NodePool{"gpu": np}, Input: provisioning.Input{Pods: []*corev1.Pod{servingPod("1")}, NodePools: []*v1.NodePool{np}}}
	got := summarize(Decide(snapshot, Options{Models: models}, func(string) string { return "nc" }))
	if diff := cmp.Diff(decided{Failures: []string{"OpenModelNotFound: openmodel llama is not in the manifests"}}, got); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
}
