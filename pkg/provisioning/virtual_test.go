package provisioning_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// TestVirtualPodsOrder: holding virtual pods take capacity before real
// pods whatever their size, yielding ones only what real pods leave
// (docs/batch.md, "Capacity buffers").
func TestVirtualPodsOrder(t *testing.T) {
	warm := func() []*provisioning.Node {
		return []*provisioning.Node{{
			Name: "warm", NodePool: "default",
			Labels:      map[string]string{v1.NodePoolLabelKey: "default", v1.LabelZone: "zone-a", corev1.LabelHostname: "warm"},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		}}
	}
	types := map[string][]*cloudprovider.InstanceType{"default": small()}
	spot := "karpenter.sh/capacity-type NotIn [reserved]"
	for _, tc := range []struct {
		name string
		in   provisioning.Input
		want summary
	}{
		{
			name: "a larger yielding pod leaves the warm node to a real pod and gets a new node",
			in: provisioning.Input{
				Pods: []*corev1.Pod{pod("real", "1", "1Gi")}, Yielding: []*corev1.Pod{pod("buffer-0", "1500m", "1Gi")},
				Nodes: warm(), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types,
			},
			want: summary{
				Claims:      []claimSummary{{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: spot}},
				Nominations: map[string]string{"real": "warm"}, Unplaced: map[string]provisioning.Reason{},
			},
		},
		{
			name: "a smaller holding pod keeps the warm node from a real pod",
			in: provisioning.Input{
				Pods: []*corev1.Pod{pod("real", "1500m", "1Gi")}, Holding: []*corev1.Pod{pod("booked-0", "1", "1Gi")},
				Nodes: warm(), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types,
			},
			want: summary{
				Claims:      []claimSummary{{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: spot}},
				Nominations: map[string]string{"booked-0": "warm"}, Unplaced: map[string]provisioning.Reason{},
			},
		},
		{
			name: "held, real, yielding: each tier largest first",
			in: provisioning.Input{
				Holding:  []*corev1.Pod{pod("booked-0", "500m", "1Gi")},
				Pods:     []*corev1.Pod{pod("small", "500m", "1Gi"), pod("large", "1", "1Gi")},
				Yielding: []*corev1.Pod{pod("buffer-0", "1", "1Gi")},
				Nodes:    warm(), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types,
			},
			want: summary{
				Claims:      []claimSummary{{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: spot}},
				Nominations: map[string]string{"booked-0": "warm", "large": "warm", "small": "warm"}, Unplaced: map[string]provisioning.Reason{},
			},
		},
		{
			name: "virtual pods count against limits: the yielding pod is left out, not the real one",
			in: provisioning.Input{
				Pods: []*corev1.Pod{pod("real", "1500m", "1Gi")}, Yielding: []*corev1.Pod{pod("buffer-0", "1500m", "1Gi")},
				NodePools: []*v1.NodePool{nodePool("default", func(np *v1.NodePool) {
					np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("2")}
				})}, InstanceTypes: types,
			},
			want: summary{
				Claims:      []claimSummary{{NodePool: "default", Cheapest: "m.large", Options: 1, Pods: 1, CapacityTypes: spot}},
				Nominations: map[string]string{}, Unplaced: map[string]provisioning.Reason{"buffer-0": provisioning.ReasonNodePoolLimitExceeded},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summarize(provisioning.Solve(tc.in))); diff != "" {
				t.Errorf("solve (-want +got):\n%s", diff)
			}
		})
	}
}
