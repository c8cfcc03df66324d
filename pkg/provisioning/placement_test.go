package provisioning_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// daemon is a DaemonSet's pod template requesting cpu, with mods.
func daemon(name, cpu string, mods ...func(*corev1.Pod)) *corev1.Pod {
	return pod(name, cpu, "10Mi", mods...)
}

func onInstanceTypes(types ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: types}}}},
		}}}
	}
}

func withRequirement(key string, op corev1.NodeSelectorOperator, values ...string) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values})
	}
}

func withTaint(effect corev1.TaintEffect) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "example.com/spare", Effect: effect}}
	}
}

// Placement the real cluster would refuse, each seen through simulate
// (issue 17): the solver must plan only what kube-scheduler will honour.
func TestPlacementMatchesTheCluster(t *testing.T) {
	types := map[string][]*cloudprovider.InstanceType{"default": small(), "spare": small()}
	cases := []struct {
		name string
		in   provisioning.Input
		want summary
	}{
		{
			name: "daemonsets that select other instance types add no overhead",
			in: provisioning.Input{
				Pods: pods(1, "1", "1Gi"), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types,
				DaemonSetPods: []*corev1.Pod{daemon("gpu-agent", "1500m", onInstanceTypes("m.2xlarge")), daemon("big-agent", "1500m", onInstanceTypes("m.2xlarge"))},
			},
			want: summary{Claims: []claimSummary{{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "a daemonset on every type still counts on every type",
			in: provisioning.Input{
				Pods: pods(1, "1", "1Gi"), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types,
				DaemonSetPods: []*corev1.Pod{daemon("logs", "1500m")},
			},
			want: summary{Claims: []claimSummary{{NodePool: "default", Cheapest: "m.xlarge", Options: 2, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "a daemonset's host port keeps the pod off the types it runs on",
			in: provisioning.Input{
				Pods: pods(1, "1", "1Gi", withHostPort(8080)), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types,
				DaemonSetPods: []*corev1.Pod{daemon("proxy", "100m", withHostPort(8080), onInstanceTypes("m.large", "m.xlarge"))},
			},
			want: summary{Claims: []claimSummary{{NodePool: "default", Cheapest: "m.2xlarge", Options: 1, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "a daemonset's host port on every type: no node is launched",
			in: provisioning.Input{
				Pods: pods(1, "1", "1Gi", withHostPort(8080)), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types,
				DaemonSetPods: []*corev1.Pod{daemon("proxy", "100m", withHostPort(8080))},
			},
			want: summary{Unplaced: map[string]provisioning.Reason{"p0": provisioning.ReasonNoInstanceTypeFits}},
		},
		{
			name: "daemonsets that leave no room on any type: the pod waits for room, not for requirements",
			in: provisioning.Input{
				Pods: pods(1, "1", "1Gi"), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types,
				DaemonSetPods: []*corev1.Pod{daemon("logs", "64")},
			},
			want: summary{Unplaced: map[string]provisioning.Reason{"p0": provisioning.ReasonNoInstanceTypeFits}},
		},
		{
			name: "PreferNoSchedule is avoided when an untainted NodePool fits",
			in: provisioning.Input{
				Pods: pods(1, "1", "1Gi"), InstanceTypes: types,
				NodePools: []*v1.NodePool{nodePool("spare", withTaint(corev1.TaintEffectPreferNoSchedule), withWeight(100)), nodePool("default")},
			},
			want: summary{Claims: []claimSummary{{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "PreferNoSchedule is tolerated as the last resort",
			in: provisioning.Input{
				Pods: pods(1, "1", "1Gi"), InstanceTypes: types,
				NodePools: []*v1.NodePool{nodePool("spare", withTaint(corev1.TaintEffectPreferNoSchedule)), nodePool("default", withTaint(corev1.TaintEffectNoSchedule))},
			},
			want: summary{Claims: []claimSummary{{NodePool: "spare", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "a request of 9.2e15 cores does not wrap around",
			in:   provisioning.Input{Pods: pods(1, "9.2e15", "1Gi"), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types},
			want: summary{Unplaced: map[string]provisioning.Reason{"p0": provisioning.ReasonNoInstanceTypeFits}},
		},
		{
			name: "pods whose sum overflows int64 do not share a node",
			in:   provisioning.Input{Pods: pods(2, "5e15", "1Gi"), NodePools: []*v1.NodePool{nodePool("default")}, InstanceTypes: types},
			want: summary{Unplaced: map[string]provisioning.Reason{"p0": provisioning.ReasonNoInstanceTypeFits, "p1": provisioning.ReasonNoInstanceTypeFits}},
		},
		{
			name: "a limit of 1e19 cores blocks nothing",
			in: provisioning.Input{Pods: pods(1, "1", "1Gi"), InstanceTypes: types, NodePools: []*v1.NodePool{nodePool("default", func(np *v1.NodePool) {
				np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("1e19"), corev1.ResourceMemory: resource.MustParse("100Ei")}
			})}},
			want: summary{Claims: []claimSummary{{NodePool: "default", Cheapest: "m.large", Options: 3, Pods: 1, CapacityTypes: "karpenter.sh/capacity-type NotIn [reserved]"}}},
		},
		{
			name: "a NodePool whose NodeClass is missing is reported, not 'no NodePool'",
			in:   provisioning.Input{Pods: pods(1, "1", "1Gi"), UnusableNodePools: map[string]string{"gpu": `nodeclass "gpu" not ready`}},
			want: summary{Unplaced: map[string]provisioning.Reason{"p0": provisioning.ReasonNodeClassNotReady}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(provisioning.Solve(tc.in))
			if tc.want.Unplaced == nil {
				tc.want.Unplaced = map[string]provisioning.Reason{}
			}
			if tc.want.Nominations == nil {
				tc.want.Nominations = map[string]string{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The unplaced reason names the resource no instance type has enough of,
// extended resources included.
func TestUnplacedReasonNamesTheResource(t *testing.T) {
	cases := []struct {
		name, cpu string
		mod       func(*corev1.Pod)
		want      string
	}{
		{"an extended resource", "1", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests["example.com/widget"] = resource.MustParse("1")
		}, "example.com/widget 1 (the most any instance type has room for is 0)"},
		{"cpu", "64", func(*corev1.Pod) {}, "cpu 64"},
		{"huge cpu", "9.2e15", func(*corev1.Pod) {}, "cpu 9200"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := provisioning.Solve(provisioning.Input{Pods: pods(1, tc.cpu, "1Gi", tc.mod), NodePools: []*v1.NodePool{nodePool("default")},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()}})
			if len(r.Unplaced) != 1 || !strings.Contains(r.Unplaced[0].Message, tc.want) {
				t.Fatalf("unplaced %+v; want a message naming %q", r.Unplaced, tc.want)
			}
		})
	}
}

// Labels a NodePool's requirements fix reach the NodeClaim (and so the
// Node), as the solver assumed when it placed pods on it.
func TestRequirementLabelsReachTheNodeClaim(t *testing.T) {
	cases := []struct {
		name  string
		pool  func(*v1.NodePool)
		pod   func(*corev1.Pod)
		label string
		want  string
	}{
		{"a single value", withRequirement("team", corev1.NodeSelectorOpIn, "ml"), func(*corev1.Pod) {}, "team", "ml"},
		{"the pod's choice among the NodePool's", withRequirement("team", corev1.NodeSelectorOpIn, "ml", "web"), func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{"team": "web"}
		}, "team", "web"},
		{"Exists gets a value", withRequirement("team", corev1.NodeSelectorOpExists), func(*corev1.Pod) {}, "team", "0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := provisioning.Solve(provisioning.Input{Pods: pods(1, "1", "1Gi", tc.pod), NodePools: []*v1.NodePool{nodePool("default", tc.pool)},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": small()}})
			if len(r.NewNodeClaims) != 1 {
				t.Fatalf("result %+v; want one NodeClaim", r)
			}
			if got := r.NewNodeClaims[0].Labels[tc.label]; got != tc.want {
				t.Errorf("label %s = %q, want %q (labels %v)", tc.label, got, tc.want, r.NewNodeClaims[0].Labels)
			}
			if _, ok := r.NewNodeClaims[0].Labels[v1.LabelZone]; ok {
				t.Errorf("well-known labels are the cloud's to set: %v", r.NewNodeClaims[0].Labels)
			}
		})
	}
}

func withWeight(w int32) func(*v1.NodePool) {
	return func(np *v1.NodePool) { np.Spec.Weight = &w }
}
