package scaleup

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

// registeredNode is the node NodeClaim claim registered, with labels.
func registeredNode(claim string, labels map[string]string) *provisioning.Node {
	l := map[string]string{v1.NodePoolLabelKey: "default", v1.NodeRegisteredLabelKey: "true", corev1.LabelHostname: claim}
	for k, v := range labels {
		l[k] = v
	}
	return &provisioning.Node{
		Name: "node-" + claim, NodeClaim: claim, NodePool: "default", Labels: l,
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
	}
}

// The runaway of issue 17: a pod planned onto a NodeClaim whose node then
// registers without a label the pod needs must not get a new NodeClaim
// every window. Each round, the "cloud" registers the planned NodeClaim
// without the label; Capstan may launch once, never twice.
func TestNominatedNodeMismatchStopsTheRunaway(t *testing.T) {
	np := test.NodePool(func(np *v1.NodePool) {
		np.Name = "default"
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: "team", Operator: corev1.NodeSelectorOpIn, Values: []string{"ml"}}}
	})
	pod := test.Pod("default", func(p *corev1.Pod) {
		p.Name, p.UID = "web", types.UID("uid-web")
		p.Spec.NodeSelector = map[string]string{"team": "ml"}
	})
	its := []*cloudprovider.InstanceType{test.InstanceType(test.InstanceTypeOptions{Name: "m.xlarge", CPU: 4, Memory: 16})}
	var noms Nominations
	var nodes []*provisioning.Node
	launched := 0
	for round := range 5 {
		snapshot := state.Snapshot{NodePools: map[string]*v1.NodePool{"default": np}, Input: provisioning.Input{
			Pods: []*corev1.Pod{pod}, Nodes: nodes, NodePools: []*v1.NodePool{np},
			InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": its},
		}}
		d := Decide(snapshot, Options{Nominations: &noms}, func(string) string { return fmt.Sprintf("default-%d", round) })
		launched += len(d.NodeClaims)
		for _, nc := range d.NodeClaims {
			// The broken registration: the node lacks team=ml.
			nodes = append(nodes, registeredNode(nc.Name, nil))
		}
		if round > 0 && (len(d.Result.Unplaced) != 1 || d.Result.Unplaced[0].Reason != provisioning.ReasonNominatedNodeMismatch) {
			t.Fatalf("round %d: %+v; want the pod reported as NominatedNodeMismatch", round, d.Result.Unplaced)
		}
	}
	if launched != 1 {
		t.Errorf("launched %d NodeClaims for one pod; want 1", launched)
	}

	// Once its node carries the label, the pod is nominated to it.
	nodes = []*provisioning.Node{registeredNode("default-0", map[string]string{"team": "ml"})}
	snapshot := state.Snapshot{NodePools: map[string]*v1.NodePool{"default": np}, Input: provisioning.Input{
		Pods: []*corev1.Pod{pod}, Nodes: nodes, NodePools: []*v1.NodePool{np}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": its},
	}}
	d := Decide(snapshot, Options{Nominations: &noms}, func(string) string { return "default-x" })
	if len(d.NodeClaims) != 0 || len(d.Result.Nominations) != 1 || len(d.Result.Unplaced) != 0 {
		t.Errorf("fitting node: %+v; want one nomination", d.Result)
	}
}

func TestMisfitNamesWhatIsMissing(t *testing.T) {
	pod := test.Pod("default", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"team": "ml"} })
	if why := provisioning.Misfit(pod, registeredNode("a", nil)); why == "" {
		t.Error("a node without the label the pod selects fits it")
	}
	if why := provisioning.Misfit(pod, registeredNode("a", map[string]string{"team": "ml"})); why != "" {
		t.Errorf("the node fits, yet: %s", why)
	}
	tainted := registeredNode("a", map[string]string{"team": "ml"})
	tainted.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
	if why := provisioning.Misfit(pod, tainted); why == "" {
		t.Error("an untolerated taint fits")
	}
}
