package scaleup

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

// Virtual pods are solved (they size and launch NodeClaims) but are not
// pending pods: not counted, never told, never remembered as nominated.
func TestDecideKeepsVirtualPodsApart(t *testing.T) {
	np := test.NodePool(func(np *v1.NodePool) { np.Name = "default" })
	its := []*cloudprovider.InstanceType{test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8})}
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")},
	}}}}}
	buffer := state.NewVirtualPod(state.KindCapacityBuffer, "default", "warm", 0, tmpl)
	held := state.NewVirtualPod("ProvisioningRequest", "default", "job", 0, tmpl)
	warm := registeredNode("warm", nil)
	warm.Allocatable[corev1.ResourceCPU] = resource.MustParse("2")
	snapshot := state.Snapshot{NodePools: map[string]*v1.NodePool{"default": np}, Input: provisioning.Input{
		Holding: []*corev1.Pod{&held}, Yielding: []*corev1.Pod{&buffer}, Nodes: []*provisioning.Node{warm},
		NodePools: []*v1.NodePool{np}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": its},
	}}
	var noms Nominations
	d := Decide(snapshot, Options{MaxInstanceTypes: provisioning.DefaultMaxInstanceTypes, Nominations: &noms}, func(string) string { return "nc" })
	type summary struct {
		Pending, Virtual, Nominations, Unplaced int
		VirtualNominations                      map[string]string
		ClaimPods                               []string
		Events                                  int
		Remembered                              int
	}
	got := summary{Pending: d.Pending, Virtual: d.Virtual.Count, Nominations: len(d.Result.Nominations), Unplaced: len(d.Result.Unplaced),
		VirtualNominations: map[string]string{}, Remembered: len(noms.byPod)}
	for _, n := range d.Virtual.Nominations {
		got.VirtualNominations[n.Pod.Name] = n.NodeName
	}
	for _, c := range d.Result.NewNodeClaims {
		for _, p := range c.Pods {
			got.ClaimPods = append(got.ClaimPods, p.Name)
		}
	}
	for _, e := range d.Effects() {
		if _, ok := e.(effects.Event); ok {
			got.Events++
		}
	}
	want := summary{Virtual: 2, VirtualNominations: map[string]string{"job-virtual-0": "node-warm"}, ClaimPods: []string{"warm-virtual-0"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
	var b Batch
	b.Solved(d, Window{Idle: time.Second, Max: 10 * time.Second}, time.Unix(0, 0))
	if b.recheck.IsZero() {
		t.Errorf("a decision with virtual pods must be solved again (a buffer is refilled without an event)")
	}
}
