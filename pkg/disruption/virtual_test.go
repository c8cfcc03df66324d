package disruption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/state"
)

// bufferPod is a CapacityBuffer's i-th virtual pod requesting cpu.
func bufferPod(i int, cpu string) corev1.Pod {
	return state.NewVirtualPod(state.KindCapacityBuffer, "default", "warm", i, corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
	}})
}

// Consolidation keeps the capacity virtual pods hold: a command is valid
// only if every virtual pod that fits now still fits afterwards
// (docs/batch.md, "Capacity buffers"). m5.n has n cores, 100m reserved.
func TestDisruptionKeepsVirtualPods(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(c *cluster)
		// its are the NodePool's instance types, m5 when nil.
		its     []*cloudprovider.InstanceType
		virtual []corev1.Pod
		want    []string
		// placed are the virtual pods bound, by name, to their node.
		placed map[string]string
		// replacementPods are the command's replacement's pods.
		replacementPods []string
	}{
		{
			name: "an empty node holding a buffer stays",
			setup: func(c *cluster) {
				c.launched("a", typeNamed(m5, "m5.2"), v1.CapacityTypeOnDemand, "")
				c.launched("b", typeNamed(m5, "m5.2"), v1.CapacityTypeOnDemand, "")
				c.pod("web", "a", requests("1500m"))
			},
			virtual: []corev1.Pod{bufferPod(0, "1500m")},
			placed:  map[string]string{"warm-virtual-0": "b"},
		},
		{
			name: "an empty node goes when the buffer fits elsewhere",
			setup: func(c *cluster) {
				c.launched("a", typeNamed(m5, "m5.4"), v1.CapacityTypeOnDemand, "")
				c.launched("b", typeNamed(m5, "m5.2"), v1.CapacityTypeOnDemand, "")
				c.pod("web", "a", requests("1"))
			},
			virtual: []corev1.Pod{bufferPod(0, "1500m")},
			want:    []string{"b"},
			placed:  map[string]string{"warm-virtual-0": "a"},
		},
		{
			name: "another node's pods do not take the buffer's room",
			setup: func(c *cluster) {
				c.launched("a", typeNamed(m5, "m5.4"), v1.CapacityTypeOnDemand, "")
				c.launched("b", typeNamed(m5, "m5.2"), v1.CapacityTypeOnDemand, "")
				c.pod("web", "a", requests("1"))
				c.pod("api", "b", requests("1500m"))
			},
			// No one node takes all three pods: only moving api could save.
			its:     []*cloudprovider.InstanceType{typeNamed(m5, "m5.2"), typeNamed(m5, "m5.4")},
			virtual: []corev1.Pod{bufferPod(0, "2")},
			placed:  map[string]string{"warm-virtual-0": "a"},
		},
		{
			name: "a node holding only a buffer is replaced by a cheaper one holding it",
			setup: func(c *cluster) {
				c.launched("a", typeNamed(m5, "m5.4"), v1.CapacityTypeOnDemand, "")
			},
			virtual:         []corev1.Pod{bufferPod(0, "1500m")},
			want:            []string{"a"},
			placed:          map[string]string{"warm-virtual-0": "a"},
			replacementPods: []string{"default/warm-virtual-0"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			underutilized(c)
			tc.setup(c)
			its := tc.its
			if its == nil {
				its = m5
			}
			c.snapshot(its...)
			c.objs.VirtualPods = tc.virtual
			snapshot := state.Build(c.objs, map[string][]*cloudprovider.InstanceType{"default": its}, []string{corev1.DefaultSchedulerName})
			in := NewInput(c.objs, snapshot, Policies{})
			placed := map[string]string{}
			for _, p := range in.Virtual {
				placed[p.Name] = p.Spec.NodeName
			}
			if diff := cmp.Diff(tc.placed, placed); diff != "" {
				t.Errorf("virtual pods placed (-want +got):\n%s", diff)
			}
			d := Plan(in, Methods(Gates{}), t0.Add(time.Hour))
			if diff := cmp.Diff(tc.want, names(d.Command.Candidates), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("disrupted (-want +got):\n%s", diff)
			}
			var pods []string
			for _, r := range d.Command.Replacements {
				pods = append(pods, podNames(r.Pods)...)
			}
			if diff := cmp.Diff(tc.replacementPods, pods, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("replacement pods (-want +got):\n%s", diff)
			}
		})
	}
}
