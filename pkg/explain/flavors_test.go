package explain_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

// A model whose a100 flavor needs 2 GPUs, where only 1-GPU a100s exist:
// explain says a100 is skipped for its 2 GPUs and t4 is chosen.
func TestExplainFlavors(t *testing.T) {
	gpuType := func(name, gpuName string, count int64) *cloudprovider.InstanceType {
		return test.InstanceType(test.InstanceTypeOptions{Name: name, CPU: 8, Memory: 32,
			Extended: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(count, resource.DecimalSI)},
			Labels:   map[string]string{v1.LabelInstanceGPUName: gpuName}})
	}
	its := []*cloudprovider.InstanceType{gpuType("a100.x1", "a100", 1), gpuType("t4.x1", "t4", 1)}
	p := test.Pod("default", func(p *corev1.Pod) {
		p.Name = "serving"
		p.Labels = map[string]string{flavors.ModelNameLabelKey: "llama"}
		p.Spec.Containers[0].Name = flavors.ModelRunnerContainerName
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	})
	snapshot := state.Build(state.Objects{NodePools: []v1.NodePool{pool("gpu")}, Pods: []corev1.Pod{*p}},
		map[string][]*cloudprovider.InstanceType{"gpu": its}, []string{corev1.DefaultSchedulerName})
	model := &flavors.OpenModel{Name: "llama", Flavors: []flavors.Flavor{
		{Name: "a100", NodeSelector: map[string]string{v1.LabelInstanceGPUName: "a100"}, Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}},
		{Name: "t4", NodeSelector: map[string]string{v1.LabelInstanceGPUName: "t4"}, Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
	}}
	got := explain.ForPod(explain.PodInput{Pod: p, Snapshot: snapshot, SchedulerNames: []string{corev1.DefaultSchedulerName},
		Plan: scaleup.Options{Models: flavors.Models{Installed: true, ByName: map[string]*flavors.OpenModel{"llama": model}}}})
	want := []explain.FlavorVerdict{
		{Flavor: "a100", Needs: "2 nvidia.com/gpu", Reason: "NoInstanceTypeFits", Message: got.Flavors[0].Message},
		{Flavor: "t4", Needs: "1 nvidia.com/gpu", Chosen: true, Fits: true, Next: got.Next},
	}
	if diff := cmp.Diff(want, got.Flavors); diff != "" {
		t.Errorf("flavors (-want +got):\n%s", diff)
	}
	if !strings.Contains(got.Flavors[0].Message, "nvidia.com/gpu") {
		t.Errorf("a100's message %q does not name the GPUs it lacks", got.Flavors[0].Message)
	}
	if !strings.HasPrefix(got.Next, "launch a NodeClaim from NodePool gpu: t4.x1") {
		t.Errorf("next %q, want a t4.x1", got.Next)
	}
	var b strings.Builder
	if err := explain.WritePod(&b, got); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  flavor a100 (needs 2 nvidia.com/gpu): skipped: NoInstanceTypeFits: ",
		"  flavor t4 (needs 1 nvidia.com/gpu): chosen: launch a NodeClaim from NodePool gpu: t4.x1",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
