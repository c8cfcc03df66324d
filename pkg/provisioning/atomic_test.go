package provisioning_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// inGroup puts a pod in the atomic group key by Capstan's annotation.
func inGroup(key string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Annotations = map[string]string{gang.AtomicGroupAnnotationKey: key}
	}
}

// named renames pods prefix0, prefix1...
func named(prefix string, ps []*corev1.Pod) []*corev1.Pod {
	for i, p := range ps {
		p.Name = fmt.Sprintf("%s%d", prefix, i)
	}
	return ps
}

// gpuLimited is a NodePool of one-GPU nodes allowed gpus GPUs in all.
func gpuLimited(gpus string) ([]*v1.NodePool, map[string][]*cloudprovider.InstanceType) {
	np := nodePool("default", func(np *v1.NodePool) {
		np.Spec.Limits = v1.Limits{corev1.ResourceName("nvidia.com/gpu"): resource.MustParse(gpus)}
	})
	return []*v1.NodePool{np}, map[string][]*cloudprovider.InstanceType{"default": gpuSizes()[:1]}
}

func TestSolveAtomicGroups(t *testing.T) {
	pools, its := gpuLimited("4")
	gpuClaim := func(group string) claimSummary {
		return claimSummary{NodePool: "default", Cheapest: "g.xlarge", Options: 1, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]", AtomicGroup: group}
	}
	unplaced := func(reason provisioning.Reason, names ...string) map[string]provisioning.Reason {
		out := map[string]provisioning.Reason{}
		for _, n := range names {
			out[n] = reason
		}
		return out
	}
	withUnplaced := func(s summary, more map[string]provisioning.Reason) summary {
		for k, v := range more {
			s.Unplaced[k] = v
		}
		return s
	}
	workload := func(name string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To(name)} }
	}
	pluginGroup := func(name string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Labels = map[string]string{gang.PodGroupLabelKey: name} }
	}
	bound := &provisioning.Node{
		Name: "gpu-0", NodePool: "other",
		Labels:      map[string]string{v1.LabelZone: "zone-a", corev1.LabelHostname: "gpu-0"},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")},
		Pods:        named("w", pods(2, "1", "1Gi", withGPU, workload("train"))),
	}
	for _, tc := range []struct {
		name string
		in   provisioning.Input
		want summary
	}{
		{
			name: "all placed: every NodeClaim is the group's",
			in:   provisioning.Input{Pods: pods(4, "1", "1Gi", withGPU, inGroup("ns/a")), NodePools: pools, InstanceTypes: its},
			want: summary{Claims: []claimSummary{gpuClaim("ns/a"), gpuClaim("ns/a"), gpuClaim("ns/a"), gpuClaim("ns/a")}},
		},
		{
			name: "none placed: a gang of 6 where 4 nodes fit keeps nothing, and a pod after it gets the capacity",
			in: provisioning.Input{
				Pods:      append(pods(6, "1", "1Gi", withGPU, inGroup("ns/a")), pod("loose", "1", "1Gi", withGPU)),
				NodePools: pools, InstanceTypes: its,
			},
			want: summary{
				Claims:   []claimSummary{gpuClaim("")},
				Unplaced: unplaced(provisioning.ReasonIncompleteGang, "p0", "p1", "p2", "p3", "p4", "p5"),
			},
		},
		{
			name: "members already bound count toward the PodGroup's minCount",
			in: provisioning.Input{
				Pods:  named("p", pods(4, "1", "1Gi", withGPU, workload("train"))),
				Nodes: []*provisioning.Node{bound}, NodePools: pools, InstanceTypes: its,
				AtomicGroups: gang.Declared{gang.WorkloadKey("default", "train"): 6},
			},
			want: summary{Claims: []claimSummary{
				gpuClaim("scheduling.k8s.io/PodGroup/default/train"), gpuClaim("scheduling.k8s.io/PodGroup/default/train"),
				gpuClaim("scheduling.k8s.io/PodGroup/default/train"), gpuClaim("scheduling.k8s.io/PodGroup/default/train"),
			}},
		},
		{
			name: "a min count below the members: the min is placed, the others wait with their own reason",
			in: provisioning.Input{
				Pods: pods(6, "1", "1Gi", withGPU, pluginGroup("train")), NodePools: pools, InstanceTypes: its,
				AtomicGroups: gang.Declared{gang.PluginKey("default", "train"): 4},
			},
			want: withUnplaced(summary{Claims: []claimSummary{
				gpuClaim("scheduling.x-k8s.io/PodGroup/default/train"), gpuClaim("scheduling.x-k8s.io/PodGroup/default/train"),
				gpuClaim("scheduling.x-k8s.io/PodGroup/default/train"), gpuClaim("scheduling.x-k8s.io/PodGroup/default/train"),
			}, Unplaced: map[string]provisioning.Reason{}}, unplaced(provisioning.ReasonNodePoolLimitExceeded, "p4", "p5")),
		},
		{
			name: "a PodGroup without a gang policy is no gang: its pods are placed one by one",
			in: provisioning.Input{
				Pods: pods(6, "1", "1Gi", withGPU, workload("serve")), NodePools: pools, InstanceTypes: its,
				AtomicGroups: gang.Declared{gang.WorkloadKey("default", "serve"): 0},
			},
			want: summary{
				Claims:   []claimSummary{gpuClaim(""), gpuClaim(""), gpuClaim(""), gpuClaim("")},
				Unplaced: unplaced(provisioning.ReasonNodePoolLimitExceeded, "p4", "p5"),
			},
		},
		{
			name: "two gangs where one fits: the other is left out and the first keeps its nodes",
			in: provisioning.Input{
				Pods:      append(named("a", pods(3, "1", "1Gi", withGPU, inGroup("ns/a"))), named("b", pods(3, "1", "1Gi", withGPU, inGroup("ns/b")))...),
				NodePools: pools, InstanceTypes: its,
			},
			want: summary{
				Claims:   []claimSummary{gpuClaim("ns/a"), gpuClaim("ns/a"), gpuClaim("ns/a")},
				Unplaced: unplaced(provisioning.ReasonIncompleteGang, "b0", "b1", "b2"),
			},
		},
		{
			name: "an in-flight NodeClaim launched for a gang takes only the gang's pods",
			in: provisioning.Input{
				Pods: []*corev1.Pod{pod("loose", "500m", "1Gi"), pod("a0", "500m", "1Gi", inGroup("ns/a")), pod("a1", "500m", "1Gi", inGroup("ns/a"))},
				Nodes: []*provisioning.Node{{
					Name: "gang-0", NodePool: "default", InFlight: true, AtomicGroup: "ns/a",
					Labels:      map[string]string{v1.LabelZone: "zone-a"},
					Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")},
				}},
				NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()},
			},
			want: summary{
				Claims:      []claimSummary{{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}},
				Nominations: map[string]string{"a0": "gang-0", "a1": "gang-0"},
			},
		},
		{
			name: "gangs do not share a NodeClaim",
			in: provisioning.Input{
				Pods:      append(named("a", pods(2, "500m", "1Gi", inGroup("ns/a"))), named("b", pods(2, "500m", "1Gi", inGroup("ns/b")))...),
				NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()},
			},
			want: summary{Claims: []claimSummary{
				{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 2, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]", AtomicGroup: "ns/a"},
				{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 2, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]", AtomicGroup: "ns/b"},
			}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want.Nominations == nil {
				tc.want.Nominations = map[string]string{}
			}
			if tc.want.Unplaced == nil {
				tc.want.Unplaced = map[string]provisioning.Reason{}
			}
			if diff := cmp.Diff(tc.want, summarize(provisioning.Solve(tc.in))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// An incomplete gang's pods say which gang and why a member could not be
// placed.
func TestSolveIncompleteGangMessage(t *testing.T) {
	pools, its := gpuLimited("4")
	r := provisioning.Solve(provisioning.Input{Pods: pods(6, "1", "1Gi", withGPU, inGroup("ns/a")), NodePools: pools, InstanceTypes: its})
	want := "gang ns/a needs 6 pods placed together, only 4 can be (NodePoolLimitExceeded: nodepool default: launching any instance type that fits would exceed the NodePool's limits)"
	if len(r.Unplaced) != 6 {
		t.Fatalf("unplaced %d pods, want 6", len(r.Unplaced))
	}
	for _, u := range r.Unplaced {
		if diff := cmp.Diff(want, u.Message); diff != "" {
			t.Errorf("%s (-want +got):\n%s", u.Pod.Name, diff)
		}
	}
}
