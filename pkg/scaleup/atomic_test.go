package scaleup

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

// Every NodeClaim launched for a gang names it, the launch's size and the
// launch (its first NodeClaim); other NodeClaims carry none of these.
func TestDecideAnnotatesAtomicGroups(t *testing.T) {
	np := test.NodePool(func(np *v1.NodePool) { np.Name = "default" })
	its := []*cloudprovider.InstanceType{test.InstanceType(test.InstanceTypeOptions{Name: "m.xlarge", CPU: 4, Memory: 16})}
	pod := func(name, group string) *corev1.Pod {
		return test.Pod("default", func(p *corev1.Pod) {
			p.Name = name
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
			if group != "" {
				p.Annotations = map[string]string{gang.AtomicGroupAnnotationKey: group}
			}
		})
	}
	snapshot := state.Snapshot{NodePools: map[string]*v1.NodePool{"default": np}, Input: provisioning.Input{
		Pods:      []*corev1.Pod{pod("a0", "ns/a"), pod("loose", ""), pod("a1", "ns/a"), pod("a2", "ns/a")},
		NodePools: []*v1.NodePool{np}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": its},
	}}
	n := 0
	d := Decide(snapshot, Options{MaxInstanceTypes: provisioning.DefaultMaxInstanceTypes}, func(string) string { n++; return fmt.Sprintf("nc-%d", n) })
	type annotations struct{ Pod, Group, Size, Launch string }
	var got []annotations
	for i, nc := range d.NodeClaims {
		got = append(got, annotations{
			Pod: d.Result.NewNodeClaims[i].Pods[0].Name, Group: nc.Annotations[gang.AtomicGroupAnnotationKey],
			Size: nc.Annotations[gang.AtomicGroupSizeAnnotationKey], Launch: nc.Annotations[gang.AtomicGroupLaunchAnnotationKey],
		})
	}
	want := []annotations{
		{Pod: "a0", Group: "ns/a", Size: "3", Launch: "nc-1"},
		{Pod: "loose"},
		{Pod: "a1", Group: "ns/a", Size: "3", Launch: "nc-1"},
		{Pod: "a2", Group: "ns/a", Size: "3", Launch: "nc-1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
