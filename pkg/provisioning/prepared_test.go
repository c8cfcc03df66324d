package provisioning_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// Solves sharing a Prepared each start from the snapshot: what one
// places on a node (its room, its host ports) and what it launches
// against the NodePool's limits are not there for the next.
func TestPreparedSolvesAreIndependent(t *testing.T) {
	hostPort := func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80, Protocol: corev1.ProtocolTCP}}
	}
	node := existingNode("n1", "zone-a")
	node.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("110")}
	node.Capacity = node.Allocatable
	limited := zonePool()
	limited.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("10")}
	its := map[string][]*cloudprovider.InstanceType{"default": threeZones()}
	prepared := provisioning.Prepare(provisioning.Input{Nodes: []*provisioning.Node{node}, NodePools: []*v1.NodePool{limited}, InstanceTypes: its})
	for _, name := range []string{"first", "second", "third"} {
		in := provisioning.Input{
			Pods:  []*corev1.Pod{pod(name, "800m", "1Gi", hostPort), pod(name+"-big", "6", "1Gi")},
			Nodes: []*provisioning.Node{node}, NodePools: []*v1.NodePool{limited},
			InstanceTypes: its,
			Prepared:      prepared,
		}
		r := solveChecked(t, in)
		if len(r.Nominations) != 1 || r.Nominations[0].NodeName != "n1" || r.Nominations[0].Pod.Name != name {
			t.Errorf("solve %s: nominations %+v, want %s on n1 (the node's room and port are free in every solve)", name, r.Nominations, name)
		}
		if len(r.NewNodeClaims) != 1 || len(r.Unplaced) != 0 {
			t.Errorf("solve %s: %d new claims, %d unplaced; want the big pod on one new node within the limits every time", name, len(r.NewNodeClaims), len(r.Unplaced))
		}
	}
}
