package disruption

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/state"
)

// atomicRequest are the virtual pods of an atomic ProvisioningRequest
// default/name: n pods requesting cpu each, in one atomic group, as the
// provreq part makes them (docs/batch.md, "ProvisioningRequest").
func atomicRequest(name string, n int, cpu string) []corev1.Pod {
	var out []corev1.Pod
	for i := range n {
		p := state.NewVirtualPod("ProvisioningRequest", "default", name, i, corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
		}})
		p.Annotations[gang.AtomicGroupAnnotationKey] = "ProvisioningRequest/default/" + name
		out = append(out, p)
	}
	return out
}

// A pending atomic request that cannot be placed as a whole holds
// nothing: none of its virtual pods moves with a node, and the plan is
// the one without it, even where some of its pods would fit a node on
// their own (docs/batch.md, "Capacity buffers": only virtual pods that
// fit now move with their node). m5.n has n cores, 100m reserved.
func TestUnplaceableAtomicRequestBlocksNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(c *cluster)
		virtual []corev1.Pod
		method  string
		want    []string
	}{
		{
			name: "an empty node goes: no instance type fits a pod",
			setup: func(c *cluster) {
				c.launched("a", typeNamed(m5, "m5.4"), v1.CapacityTypeOnDemand, "")
				c.launched("b", typeNamed(m5, "m5.2"), v1.CapacityTypeOnDemand, "")
				c.pod("web", "a", requests("1"))
			},
			virtual: atomicRequest("huge", 3, "20"),
			method:  "Emptiness", want: []string{"b"},
		},
		{
			name: "an empty node goes: the limits leave no room for the rest, though a pod fits it",
			setup: func(c *cluster) {
				c.pool().Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("8")}
				c.launched("a", typeNamed(m5, "m5.4"), v1.CapacityTypeOnDemand, "")
				c.launched("b", typeNamed(m5, "m5.4"), v1.CapacityTypeOnDemand, "")
				c.pod("web", "a", requests("1"))
			},
			virtual: atomicRequest("big", 4, "3"),
			method:  "Emptiness", want: []string{"b"},
		},
		{
			name: "a drifted busy node is replaced",
			setup: func(c *cluster) {
				c.pool().Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("12")}
				c.launched("a", typeNamed(m5, "m5.4"), v1.CapacityTypeOnDemand, "")
				c.launched("b", typeNamed(m5, "m5.4"), v1.CapacityTypeOnDemand, "")
				c.pod("web", "a", requests("1"))
				c.pod("api", "b", requests("3"))
				c.drift("b", t0)
			},
			virtual: atomicRequest("big", 4, "3"),
			method:  "Drift", want: []string{"b"},
		},
		{
			name: "two underused nodes are consolidated into one",
			setup: func(c *cluster) {
				c.pool().Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("8")}
				c.launched("a", typeNamed(m5, "m5.4"), v1.CapacityTypeOnDemand, "")
				c.launched("b", typeNamed(m5, "m5.4"), v1.CapacityTypeOnDemand, "")
				c.pod("web", "a", requests("1"))
				c.pod("api", "b", requests("1"))
			},
			virtual: atomicRequest("big", 4, "3"),
			method:  "MultiNodeConsolidation", want: []string{"a", "b"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := func(virtual []corev1.Pod) (Input, Decision) {
				c := newCluster()
				underutilized(c)
				tc.setup(c)
				c.snapshot(m5...)
				c.objs.VirtualPods = virtual
				snapshot := state.Build(c.objs, map[string][]*cloudprovider.InstanceType{"default": m5}, []string{corev1.DefaultSchedulerName})
				in := NewInput(c.objs, snapshot, Policies{})
				return in, Plan(in, Methods(Gates{Drift: true}), t0.Add(time.Hour))
			}
			in, d := plan(tc.virtual)
			if len(in.Virtual) > 0 {
				t.Errorf("virtual pods moving with nodes: %v, want none", podNames(in.Virtual))
			}
			if diff := cmp.Diff(tc.want, names(d.Command.Candidates), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("disrupted (-want +got):\n%s", diff)
			}
			if d.Command.Method != tc.method {
				t.Errorf("method %s, want %s", d.Command.Method, tc.method)
			}
			_, without := plan(nil)
			got, want := fmt.Sprint(d.Command.Method, names(d.Command.Candidates), len(d.Command.Replacements), d.Verdicts),
				fmt.Sprint(without.Command.Method, names(without.Command.Candidates), len(without.Command.Replacements), without.Verdicts)
			if got != want {
				t.Errorf("with the request the plan is %s, without it %s", got, want)
			}
		})
	}
}

// Simulate moves the candidates' pods alone: virtual pods in the
// snapshot it is given (state.Build puts them in Holding and Yielding)
// are not the candidates' to place, so a request that fits nowhere is no
// reason a candidate's pods would not schedule.
func TestSimulateMovesOnlyTheCandidatesPods(t *testing.T) {
	c := newCluster()
	c.pool().Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("12")}
	c.launched("a", typeNamed(m5, "m5.4"), v1.CapacityTypeOnDemand, "")
	c.launched("b", typeNamed(m5, "m5.4"), v1.CapacityTypeOnDemand, "")
	c.pod("web", "a", requests("1"))
	c.pod("api", "b", requests("1"))
	c.snapshot(m5...)
	c.objs.VirtualPods = atomicRequest("big", 4, "3")
	snapshot := state.Build(c.objs, map[string][]*cloudprovider.InstanceType{"default": m5}, []string{corev1.DefaultSchedulerName})
	var b Candidate
	for _, cand := range Candidates(NewInput(c.objs, snapshot, Policies{}), t0.Add(time.Hour)) {
		if cand.Node.Name == "b" {
			b = cand
		}
	}
	sim := Simulate(snapshot, []Candidate{b})
	var unplaced []string
	for _, u := range sim.Unplaced {
		unplaced = append(unplaced, u.Pod.Name)
	}
	if len(unplaced) > 0 || len(sim.Replacements) > 0 {
		t.Errorf("unplaced %v and %d replacements, want api moved onto a", unplaced, len(sim.Replacements))
	}
}
