package explain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

func pool(name string, mods ...func(*v1.NodePool)) v1.NodePool {
	np := test.NodePool(mods...)
	np.Name = name
	return *np
}

// cluster has three NodePools: one at its cpu limit, one tainted, one
// that can launch; and a 2-CPU pod marked Unschedulable.
func cluster() (state.Snapshot, *corev1.Pod) {
	its := []*cloudprovider.InstanceType{
		test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8}),
		test.InstanceType(test.InstanceTypeOptions{Name: "m.xlarge", CPU: 4, Memory: 16}),
	}
	objs := state.Objects{NodePools: []v1.NodePool{
		pool("good"),
		pool("limited", func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("1")} }),
		pool("tainted", func(np *v1.NodePool) {
			np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		}),
	}}
	p := test.Pod("default", func(p *corev1.Pod) {
		p.Name = "web"
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/0 nodes are available"}}
	})
	objs.Pods = []corev1.Pod{*p}
	return state.Build(objs, map[string][]*cloudprovider.InstanceType{"good": its, "limited": its, "tainted": its}, []string{corev1.DefaultSchedulerName}), p
}

func TestExplainPod(t *testing.T) {
	snapshot, p := cluster()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	unavailable := cloudprovider.NewUnavailableOfferings(clk, time.Minute)
	unavailable.MarkUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "m.xlarge", Zone: "zone-a"}, "InsufficientInstanceCapacity")
	got := explain.ForPod(explain.PodInput{
		Pod: p, Snapshot: snapshot, SchedulerNames: []string{corev1.DefaultSchedulerName}, Plan: scaleup.Options{Unavailable: unavailable},
	})
	if !got.Considered || !strings.Contains(got.Consideration, "Unschedulable") {
		t.Errorf("consideration %v %q", got.Considered, got.Consideration)
	}
	if !strings.HasPrefix(got.Next, "launch a NodeClaim from NodePool good: m.xlarge (spot, ") {
		t.Errorf("next %q: want a spot m.xlarge from good", got.Next)
	}
	verdicts := map[string]explain.PoolVerdict{}
	for _, v := range got.NodePools {
		verdicts[v.NodePool] = v
	}
	good := verdicts["good"]
	if !good.Compatible || len(good.Cheapest) == 0 || good.Cheapest[0].InstanceType != "m.xlarge" || good.Cheapest[0].CapacityType != v1.CapacityTypeSpot {
		t.Errorf("good: %+v", good)
	}
	if len(good.Unavailable) != 1 || good.Unavailable[0].Reason != "InsufficientInstanceCapacity" || !good.Unavailable[0].Until.Equal(clk.Now().Add(time.Minute)) {
		t.Errorf("good's unavailable offerings: %+v", good.Unavailable)
	}
	if diff := cmp.Diff(explain.PoolVerdict{
		NodePool: "limited", Reason: "NodePoolLimitExceeded", Message: verdicts["limited"].Message,
		Limits: []explain.Limit{{Resource: "cpu", Used: "0", Limit: "1"}}, Unavailable: good.Unavailable,
	}, verdicts["limited"]); diff != "" {
		t.Errorf("limited (-want +got):\n%s", diff)
	}
	if v := verdicts["tainted"]; v.Reason != "TaintNotTolerated" || !strings.Contains(v.Message, "gpu") {
		t.Errorf("tainted: %+v", v)
	}

	// Offline: taints and limits only, and what is unknown said.
	offline := explain.ForPod(explain.PodInput{Pod: p, Snapshot: snapshot, SchedulerNames: []string{corev1.DefaultSchedulerName}, Offline: true})
	if offline.Next != "" || len(offline.Unknown) == 0 || offline.NodePools[0].Compatible || offline.NodePools[2].Reason != "TaintNotTolerated" {
		t.Errorf("offline: %+v", offline)
	}
}

func TestConsideration(t *testing.T) {
	snapshot, p := cluster()
	for _, tc := range []struct {
		name string
		edit func(*corev1.Pod)
		want string
	}{
		{"bound", func(p *corev1.Pod) { p.Spec.NodeName = "n1" }, "bound to node n1"},
		{"another scheduler", func(p *corev1.Pod) { p.Spec.SchedulerName = "volcano" }, `its scheduler "volcano" is not one Capstan serves`},
		{"not yet tried", func(p *corev1.Pod) { p.Status.Conditions = nil }, "has not marked it Unschedulable yet"},
		{"finished", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }, "finished (Succeeded)"},
	} {
		cp := p.DeepCopy()
		tc.edit(cp)
		got := explain.ForPod(explain.PodInput{Pod: cp, Snapshot: snapshot, SchedulerNames: []string{corev1.DefaultSchedulerName}})
		if got.Considered || !strings.Contains(got.Consideration, tc.want) {
			t.Errorf("%s: %v %q, want not considered: %q", tc.name, got.Considered, got.Consideration, tc.want)
		}
	}
}
