package provisioning

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/test"
)

// NodePools with the same instance types and daemonsets share one
// poolTypes; a NodePool a daemonset does not run on gets its own. A
// daemonset that selects instance types counts only on those, one that
// selects none on every type.
func TestPoolTypesAreSharedAndCountDaemonsetsOnce(t *testing.T) {
	its := []*cloudprovider.InstanceType{
		test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8}),
		test.InstanceType(test.InstanceTypeOptions{Name: "m.xlarge", CPU: 4, Memory: 16}),
	}
	daemon := func(name, cpu string, types ...string) *podData {
		p := test.Pod("default", func(p *corev1.Pod) {
			p.Name = name
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
			if len(types) > 0 {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: types}}}},
				}}}
			}
		})
		return daemonData(Input{DaemonSetPods: []*corev1.Pod{p}})[0]
	}
	memo := newTypesMemo([]*podData{daemon("logs", "500m"), daemon("big", "1", "m.xlarge")})
	pool := func(name string, taint bool) *poolData {
		np := test.NodePool(func(np *v1.NodePool) {
			np.Name = name
			if taint {
				np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "example.com/dedicated", Effect: corev1.TaintEffectNoSchedule}}
			}
		})
		return newPoolData(np, its, memo)
	}
	a, b, tainted := pool("a", false), pool("b", false), pool("tainted", true)
	if &a.its[0] != &b.its[0] {
		t.Error("NodePools with the same types and daemonsets do not share their types")
	}
	if &a.its[0] == &tainted.its[0] {
		t.Error("a NodePool the daemonsets do not run on shares the types of one they run on")
	}
	daemonCPU := func(p *poolData) map[string]int64 {
		out := map[string]int64{}
		for _, d := range p.its {
			out[d.it.Name] = d.daemon.CPU
		}
		return out
	}
	if diff := cmp.Diff(map[string]int64{"m.large": 500, "m.xlarge": 1500}, daemonCPU(a)); diff != "" {
		t.Errorf("daemonset cpu per type (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{"m.large": 0, "m.xlarge": 0}, daemonCPU(tainted)); diff != "" {
		t.Errorf("daemonset cpu per type on the tainted NodePool (-want +got):\n%s", diff)
	}
}
