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
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/test"
)

// summary is the part of a Result the tables assert.
type summary struct {
	Claims      []claimSummary
	Nominations map[string]string
	Unplaced    map[string]provisioning.Reason
}

type claimSummary struct {
	NodePool      string
	Cheapest      string
	Options       int
	Pods          int
	CapacityTypes string
	Reservation   string
	AtomicGroup   string
}

func summarize(r provisioning.Result) summary {
	s := summary{Nominations: map[string]string{}, Unplaced: map[string]provisioning.Reason{}}
	for _, c := range r.NewNodeClaims {
		cs := claimSummary{NodePool: c.NodePool, Options: len(c.InstanceTypes), Pods: len(c.Pods), Reservation: c.ReservationID, AtomicGroup: c.AtomicGroup}
		if len(c.InstanceTypes) > 0 {
			cs.Cheapest = c.InstanceTypes[0].Name
		}
		if ct, ok := c.Requirements[v1.CapacityTypeLabelKey]; ok {
			cs.CapacityTypes = ct.String()
		}
		s.Claims = append(s.Claims, cs)
	}
	for _, n := range r.Nominations {
		s.Nominations[n.Pod.Name] = n.NodeName
	}
	for _, u := range r.Unplaced {
		s.Unplaced[u.Pod.Name] = u.Reason
	}
	return s
}

func pod(name string, cpu, mem string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := test.Pod("default", func(p *corev1.Pod) {
		p.Name = name
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	})
	for _, m := range mods {
		m(p)
	}
	return p
}

func pods(n int, cpu, mem string, mods ...func(*corev1.Pod)) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range n {
		out[i] = pod(fmt.Sprintf("p%d", i), cpu, mem, mods...)
	}
	return out
}

func nodePool(name string, mods ...func(*v1.NodePool)) *v1.NodePool {
	np := test.NodePool(mods...)
	np.Name = name
	return np
}

func withHostPort(port int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: port, HostPort: port}}
	}
}

func requireCapacityTypes(types ...string) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
			v1.NodeSelectorRequirementWithMinValues{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: types})
	}
}

func small() []*cloudprovider.InstanceType {
	return []*cloudprovider.InstanceType{
		test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8}),
		test.InstanceType(test.InstanceTypeOptions{Name: "m.xlarge", CPU: 4, Memory: 16}),
		test.InstanceType(test.InstanceTypeOptions{Name: "m.2xlarge", CPU: 8, Memory: 32}),
	}
}

// gpuSizes are a one-GPU type and a four-GPU type priced, as clouds do,
// far above four of the small one.
func gpuSizes() []*cloudprovider.InstanceType {
	gpus := func(n string) corev1.ResourceList {
		return corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(n)}
	}
	return []*cloudprovider.InstanceType{
		test.InstanceType(test.InstanceTypeOptions{Name: "g.xlarge", CPU: 4, Memory: 16, Extended: gpus("1"), Price: 1}),
		test.InstanceType(test.InstanceTypeOptions{Name: "g.12xlarge", CPU: 48, Memory: 192, Extended: gpus("4"), Price: 5.6}),
	}
}

func withGPU(p *corev1.Pod) {
	p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
}

// reservedTypes adds a reservation of slots on m.xlarge in zone-a.
func reservedTypes(slots int) []*cloudprovider.InstanceType {
	its := small()
	xl := its[1]
	xl.Offerings = append(xl.Offerings, &cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1", Price: 0.24 / 1e7, Available: slots})
	xl.Requirements[v1.CapacityTypeLabelKey] = nil
	delete(xl.Requirements, v1.CapacityTypeLabelKey)
	return its
}

func TestSolve(t *testing.T) {
	existing := func(name string, cpu string, mods ...func(*provisioning.Node)) *provisioning.Node {
		n := &provisioning.Node{
			Name: name, NodePool: "default",
			Labels:      map[string]string{v1.NodePoolLabelKey: "default", v1.LabelZone: "zone-a", corev1.LabelHostname: name},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		}
		for _, m := range mods {
			m(n)
		}
		return n
	}
	for _, tc := range []struct {
		name string
		in   provisioning.Input
		want summary
	}{
		{
			name: "one pod, the cheapest instance types that fit, spot preferred",
			in:   provisioning.Input{Pods: pods(1, "3", "1Gi"), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()}},
			want: summary{Claims: []claimSummary{{NodePool: "default", Cheapest: "m.xlarge", Options: 2, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "pods pack onto one node",
			in:   provisioning.Input{Pods: pods(6, "1", "1Gi"), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()}},
			want: summary{Claims: []claimSummary{{NodePool: "default", Cheapest: "m.2xlarge", Options: 1, Pods: 6, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "one-GPU pods get a small GPU node each, not one node many times dearer",
			in:   provisioning.Input{Pods: pods(2, "1", "1Gi", withGPU), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": gpuSizes()}},
			want: summary{Claims: []claimSummary{
				{NodePool: "default", Cheapest: "g.xlarge", Options: 2, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"},
				{NodePool: "default", Cheapest: "g.xlarge", Options: 2, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"},
			}},
		},
		{
			name: "a limit that allows one more node: the claim grows instead",
			in: provisioning.Input{Pods: pods(2, "1", "1Gi", withGPU), NodePools: []*v1.NodePool{nodePool("default", func(np *v1.NodePool) {
				np.Spec.Limits = v1.Limits{corev1.ResourceName("nvidia.com/gpu"): resource.MustParse("4")}
			})}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": gpuSizes()}},
			want: summary{Claims: []claimSummary{{NodePool: "default", Cheapest: "g.12xlarge", Options: 1, Pods: 2, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "init containers: the larger of the init peak and the sum",
			in: provisioning.Input{Pods: pods(1, "1", "1Gi", func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}}
			}), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()}},
			want: summary{Claims: []claimSummary{{NodePool: "default", Cheapest: "m.xlarge", Options: 2, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "sidecar init containers add to the containers",
			in: provisioning.Input{Pods: pods(1, "1500m", "1Gi", func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}
			}), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()}},
			want: summary{Claims: []claimSummary{{NodePool: "default", Cheapest: "m.xlarge", Options: 2, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "pod overhead counts",
			in: provisioning.Input{Pods: pods(1, "1500m", "1Gi", func(p *corev1.Pod) {
				p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
			}), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()}},
			want: summary{Claims: []claimSummary{{NodePool: "default", Cheapest: "m.xlarge", Options: 2, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "a NodePool taint the pod does not tolerate",
			in: provisioning.Input{
				Pods: pods(1, "1500m", "1Gi"),
				NodePools: []*v1.NodePool{nodePool("default", func(np *v1.NodePool) {
					np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
				})},
				DaemonSetPods: []*corev1.Pod{
					pod("logs", "1", "100Mi", func(p *corev1.Pod) {
						p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
					}),
					pod("untolerated", "4", "100Mi"),
				},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()},
			},
			want: summary{Unplaced: map[string]provisioning.Reason{"p0": provisioning.ReasonTaintNotTolerated}},
		},
		{
			name: "daemonset overhead pushes the pod to a larger type",
			in: provisioning.Input{
				Pods:          pods(1, "1500m", "1Gi"),
				NodePools:     []*v1.NodePool{nodePool("default")},
				DaemonSetPods: []*corev1.Pod{pod("logs", "1", "100Mi"), pod("gpu-only", "4", "100Mi", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"gpu": "true"} })},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()},
			},
			want: summary{Claims: []claimSummary{{NodePool: "default", Cheapest: "m.xlarge", Options: 2, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "existing nodes first, then in-flight, never a deleting one",
			in: provisioning.Input{
				Pods: pods(3, "1", "1Gi"),
				Nodes: []*provisioning.Node{
					existing("in-flight", "2", func(n *provisioning.Node) { n.InFlight = true }),
					existing("deleting", "8", func(n *provisioning.Node) { n.Deleting = true }),
					existing("running", "1500m"),
				},
				NodePools:     []*v1.NodePool{nodePool("default")},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()},
			},
			want: summary{Nominations: map[string]string{"p0": "running", "p1": "in-flight", "p2": "in-flight"}},
		},
		{
			name: "the disrupted taint keeps pods off a node unless tolerated",
			in: provisioning.Input{
				Pods: []*corev1.Pod{pod("plain", "1", "1Gi"), pod("tolerant", "1", "1Gi", func(p *corev1.Pod) {
					p.Spec.Tolerations = []corev1.Toleration{{Key: v1.DisruptedTaintKey, Operator: corev1.TolerationOpExists}}
				})},
				Nodes:         []*provisioning.Node{existing("disrupted", "8", func(n *provisioning.Node) { n.Taints = []corev1.Taint{v1.DisruptedNoScheduleTaint()} })},
				NodePools:     []*v1.NodePool{nodePool("default")},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()},
			},
			want: summary{
				Claims:      []claimSummary{{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}},
				Nominations: map[string]string{"tolerant": "disrupted"},
			},
		},
		{
			// The reference's static NodePools (designs/static-capacity.md):
			// pods may land on their nodes; no claim is planned from them.
			name: "a static NodePool's nodes take pods, but no claim is planned from it",
			in: provisioning.Input{
				Pods:          pods(3, "3", "1Gi"),
				Nodes:         []*provisioning.Node{existing("static-node", "4")},
				NodePools:     []*v1.NodePool{nodePool("default", func(np *v1.NodePool) { np.Spec.Replicas = ptr.To[int64](1) })},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()},
			},
			want: summary{
				Nominations: map[string]string{"p0": "static-node"},
				Unplaced:    map[string]provisioning.Reason{"p1": provisioning.ReasonNoNodePool, "p2": provisioning.ReasonNoNodePool},
			},
		},
		{
			name: "beside a static NodePool, the claim comes from the dynamic one",
			in: provisioning.Input{
				Pods: pods(1, "3", "1Gi"),
				NodePools: []*v1.NodePool{nodePool("static", func(np *v1.NodePool) { np.Spec.Replicas = ptr.To[int64](2) }),
					nodePool("dynamic")},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"static": small(), "dynamic": small()},
			},
			want: summary{Claims: []claimSummary{{NodePool: "dynamic", Cheapest: "m.xlarge", Options: 2, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "limits count existing and in-flight nodes",
			in: provisioning.Input{
				Pods:          pods(2, "3", "1Gi"),
				Nodes:         []*provisioning.Node{existing("in-flight", "4", func(n *provisioning.Node) { n.InFlight = true; n.Allocatable = nil })},
				NodePools:     []*v1.NodePool{nodePool("default", func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("8")} })},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()},
			},
			want: summary{
				Claims:   []claimSummary{{NodePool: "default", Cheapest: "m.xlarge", Options: 1, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}},
				Unplaced: map[string]provisioning.Reason{"p1": provisioning.ReasonNodePoolLimitExceeded},
			},
		},
		{
			name: "a node limit",
			in: provisioning.Input{
				Pods:          pods(3, "7", "1Gi"),
				NodePools:     []*v1.NodePool{nodePool("default", func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{"nodes": resource.MustParse("2")} })},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()},
			},
			want: summary{
				Claims: []claimSummary{
					{NodePool: "default", Cheapest: "m.2xlarge", Options: 1, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"},
					{NodePool: "default", Cheapest: "m.2xlarge", Options: 1, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"},
				},
				Unplaced: map[string]provisioning.Reason{"p2": provisioning.ReasonNodePoolLimitExceeded},
			},
		},
		{
			name: "NodePools by weight, then name",
			in: provisioning.Input{
				Pods:          pods(1, "1", "1Gi"),
				NodePools:     []*v1.NodePool{nodePool("b"), nodePool("a"), nodePool("heavy", func(np *v1.NodePool) { np.Spec.Weight = ptr.To[int32](10) })},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"a": small(), "b": small(), "heavy": small()},
			},
			want: summary{Claims: []claimSummary{{NodePool: "heavy", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "reasons: incompatible requirements, too big, all offerings unavailable",
			in: provisioning.Input{
				Pods: []*corev1.Pod{
					pod("arm", "1", "1Gi", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{v1.LabelArch: "arm64"} }),
					pod("huge", "64", "1Gi"),
					pod("zone-c", "1", "1Gi", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{v1.LabelZone: "zone-c"} }),
				},
				NodePools: []*v1.NodePool{nodePool("default", func(np *v1.NodePool) {
					np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelArch, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}
				})},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()},
			},
			want: summary{Unplaced: map[string]provisioning.Reason{
				"arm":    provisioning.ReasonIncompatibleRequirements,
				"huge":   provisioning.ReasonNoInstanceTypeFits,
				"zone-c": provisioning.ReasonIncompatibleRequirements,
			}},
		},
		{
			name: "all offerings unavailable",
			in: provisioning.Input{
				Pods:      pods(1, "1", "1Gi"),
				NodePools: []*v1.NodePool{nodePool("default")},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": {test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8, Offerings: cloudprovider.Offerings{
					{Zone: "zone-a", CapacityType: v1.CapacityTypeSpot, Price: 0.1, Available: 0},
				}})}},
			},
			want: summary{Unplaced: map[string]provisioning.Reason{"p0": provisioning.ReasonAllOfferingsUnavailable}},
		},
		{
			name: "host ports keep pods apart",
			in: provisioning.Input{
				Pods:          pods(3, "100m", "100Mi", withHostPort(8080)),
				NodePools:     []*v1.NodePool{nodePool("default")},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()},
			},
			want: summary{Claims: []claimSummary{
				{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"},
				{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"},
				{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"},
			}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(provisioning.Solve(tc.in))
			if tc.want.Nominations == nil {
				tc.want.Nominations = map[string]string{}
			}
			if tc.want.Unplaced == nil {
				tc.want.Unplaced = map[string]provisioning.Reason{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Solve (-want +got):\n%s", diff)
			}
		})
	}
}
