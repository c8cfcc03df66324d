package checker_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/provisioning/checker"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/test"
)

func hostPort(port int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: port, HostPort: port}}
	}
}

func onTypes(types ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: types}}}},
		}}}
	}
}

func podWith(name, cpu string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := randomPodNamed(name, cpu)
	for _, m := range mods {
		m(p)
	}
	return p
}

// onlyType narrows a claim to one instance type, as a solver that
// mis-filtered its options would have left it.
func onlyType(c *provisioning.NodeClaim, it *cloudprovider.InstanceType) {
	c.InstanceTypes = []*cloudprovider.InstanceType{it}
	c.Requirements = c.Requirements.Clone()
	c.Requirements[v1.LabelInstanceType] = scheduling.NewRequirement(v1.LabelInstanceType, corev1.NodeSelectorOpIn, it.Name)
}

// The checker fires on NodeClaims whose Node would not carry what the
// solver assumed: labels the requirements fix, daemonsets' overhead and
// host ports on the instance types they select.
func TestCheckerCatchesNodesUnlikeThePlan(t *testing.T) {
	large := test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8})
	xlarge := test.InstanceType(test.InstanceTypeOptions{Name: "m.xlarge", CPU: 4, Memory: 16})
	pool := func(mods ...func(*v1.NodePool)) []*v1.NodePool {
		return []*v1.NodePool{test.NodePool(append([]func(*v1.NodePool){func(np *v1.NodePool) { np.Name = "default" }}, mods...)...)}
	}
	team := func(op corev1.NodeSelectorOperator, values ...string) func(*v1.NodePool) {
		return func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{Key: "team", Operator: op, Values: values})
		}
	}
	types := map[string][]*cloudprovider.InstanceType{"default": {large, xlarge}}
	for _, tc := range []struct {
		name    string
		in      provisioning.Input
		breakIt func(*provisioning.Input, *provisioning.Result)
		want    string
	}{
		{
			name: "the NodePool's single value missing from the NodeClaim's labels",
			in:   provisioning.Input{Pods: []*corev1.Pod{podWith("a", "1")}, NodePools: pool(team(corev1.NodeSelectorOpIn, "ml")), InstanceTypes: types},
			breakIt: func(_ *provisioning.Input, r *provisioning.Result) {
				delete(r.NewNodeClaims[0].Labels, "team")
			},
			want: "the node lacks what nodepool default's requirement team In [ml] fixes",
		},
		{
			name: "the label a pod's nodeSelector narrows Exists to, missing",
			in: provisioning.Input{Pods: []*corev1.Pod{podWith("a", "1", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"team": "web"} })},
				NodePools: pool(team(corev1.NodeSelectorOpExists)), InstanceTypes: types},
			breakIt: func(_ *provisioning.Input, r *provisioning.Result) {
				delete(r.NewNodeClaims[0].Labels, "team")
			},
			want: "pod a does not match",
		},
		{
			name: "daemonsets that overflow one instance type option",
			in: provisioning.Input{Pods: []*corev1.Pod{podWith("a", "1")}, NodePools: pool(), InstanceTypes: types,
				DaemonSetPods: []*corev1.Pod{podWith("agent", "1500m", onTypes("m.large"))}},
			breakIt: func(_ *provisioning.Input, r *provisioning.Result) {
				onlyType(r.NewNodeClaims[0], large)
			},
			want: "as m.large/on-demand/zone-a over-committed: cpu requests 2500m, allocatable 1900m",
		},
		{
			name: "a pod's host port held by a daemonset on the node",
			in: provisioning.Input{Pods: []*corev1.Pod{podWith("a", "1", hostPort(8080))}, NodePools: pool(), InstanceTypes: types,
				DaemonSetPods: []*corev1.Pod{podWith("proxy", "100m", hostPort(8080), onTypes("m.large"))}},
			breakIt: func(_ *provisioning.Input, r *provisioning.Result) {
				onlyType(r.NewNodeClaims[0], large)
			},
			want: "host port 8080/TCP taken twice (pod a)",
		},
		{
			name: "a pod's host port held by a daemonset on an in-flight NodeClaim",
			in: provisioning.Input{Pods: []*corev1.Pod{podWith("a", "1", hostPort(8080))}, NodePools: pool(), InstanceTypes: types,
				Nodes: []*provisioning.Node{{Name: "in-flight", NodePool: "default", InFlight: true,
					Labels:      map[string]string{v1.LabelInstanceType: "m.large"},
					Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("10")}}},
				DaemonSetPods: []*corev1.Pod{podWith("proxy", "100m", hostPort(8080), onTypes("m.large"))}},
			breakIt: func(in *provisioning.Input, r *provisioning.Result) {
				r.NewNodeClaims = nil
				r.Nominations = []provisioning.Nomination{{Pod: in.Pods[0], NodeName: "in-flight"}}
			},
			want: "node in-flight: host port 8080/TCP taken twice (pod a)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := provisioning.Solve(tc.in)
			if err := checker.Check(tc.in, r); err != nil {
				t.Fatalf("unbroken result rejected: %v", err)
			}
			if len(r.NewNodeClaims) != 1 {
				t.Fatalf("want one claim, got %+v", r)
			}
			tc.breakIt(&tc.in, &r)
			err := checker.Check(tc.in, r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("checker said %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// A node launched from an offering with a zone ID carries it: a pod
// selecting the zone ID passes, one selecting another fails.
func TestZoneIDComesFromTheOffering(t *testing.T) {
	it := test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8, Offerings: cloudprovider.Offerings{
		{Zone: "zone-a", ZoneID: "az1", CapacityType: v1.CapacityTypeOnDemand, Price: 1, Available: cloudprovider.Unlimited},
	}})
	in := provisioning.Input{
		Pods:          []*corev1.Pod{podWith("a", "1", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{v1.LabelZoneID: "az1"} })},
		NodePools:     []*v1.NodePool{test.NodePool(func(np *v1.NodePool) { np.Name = "default" })},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": {it}},
	}
	r := provisioning.Solve(in)
	if len(r.NewNodeClaims) != 1 {
		t.Fatalf("want one claim, got %+v", r)
	}
	if err := checker.Check(in, r); err != nil {
		t.Fatalf("sound result rejected: %v", err)
	}
	r.NewNodeClaims[0].Pods[0].Spec.NodeSelector[v1.LabelZoneID] = "az2"
	if err := checker.Check(in, r); err == nil || !strings.Contains(err.Error(), "pod a does not match") {
		t.Errorf("checker said %v, want a pod that does not match", err)
	}
}

// A claim from a NodePool whose PreferNoSchedule taint its pod does not
// tolerate is flagged when an untainted NodePool could have launched a
// node for the pod; as the last resort it is not.
func TestCheckerCatchesAvoidablePreferNoSchedule(t *testing.T) {
	large := test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8})
	spare := test.NodePool(func(np *v1.NodePool) {
		np.Name = "spare"
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "example.com/spare", Effect: corev1.TaintEffectPreferNoSchedule}}
	})
	plain := test.NodePool(func(np *v1.NodePool) { np.Name = "plain" })
	in := provisioning.Input{Pods: []*corev1.Pod{podWith("a", "1")}, NodePools: []*v1.NodePool{spare, plain},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"spare": {large}, "plain": {large}}}
	r := provisioning.Solve(in)
	if err := checker.Check(in, r); err != nil || len(r.NewNodeClaims) != 1 || r.NewNodeClaims[0].NodePool != "plain" {
		t.Fatalf("solver result %+v, checker %v; want one sound claim from plain", r, err)
	}
	r.NewNodeClaims[0].NodePool, r.NewNodeClaims[0].Taints = "spare", spare.Spec.Template.Spec.Taints
	if err := checker.Check(in, r); err == nil || !strings.Contains(err.Error(), "nodepool plain, without one, could launch a node for it") {
		t.Errorf("checker said %v, want the avoidable taint flagged", err)
	}

	// With plain tainted NoSchedule, spare is the last resort.
	plain.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
	r = provisioning.Solve(in)
	if err := checker.Check(in, r); err != nil || len(r.NewNodeClaims) != 1 || r.NewNodeClaims[0].NodePool != "spare" {
		t.Errorf("solver result %+v, checker %v; want one sound claim from spare", r, err)
	}
}
