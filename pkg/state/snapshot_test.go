package state

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestBuild(t *testing.T) {
	unschedulable := corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}
	requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	launched := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Name = "launched"
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
		nc.Spec.Taints = []corev1.Taint{{Key: "team", Effect: corev1.TaintEffectNoSchedule}}
		nc.Spec.StartupTaints = []corev1.Taint{{Key: "cni", Effect: corev1.TaintEffectNoSchedule}}
		nc.Status.ProviderID = "sim://a/i-1"
	})
	planned := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Name = "planned"
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
		nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-a"}}}
		nc.Spec.Resources.Requests = requests
	})
	node := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
		Spec: corev1.NodeSpec{ProviderID: "sim://a/i-1", Taints: []corev1.Taint{
			v1.UnregisteredNoExecuteTaint(), {Key: "cni", Effect: corev1.TaintEffectNoSchedule}, {Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
		}},
	}
	objs := Objects{
		Pods: []corev1.Pod{
			{ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Status: unschedulable},
			{ObjectMeta: metav1.ObjectMeta{Name: "bound"}, Spec: corev1.PodSpec{NodeName: "node-1"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "done"}, Spec: corev1.PodSpec{NodeName: "node-1"}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
		},
		Nodes:      []corev1.Node{node},
		NodeClaims: []v1.NodeClaim{*launched, *planned},
		NodePools:  []v1.NodePool{*test.NodePool(func(np *v1.NodePool) { np.Name = "default" })},
	}
	s := Build(objs, nil, []string{corev1.DefaultSchedulerName})
	if len(s.Input.Pods) != 1 || s.Input.Pods[0].Name != "pending" {
		t.Errorf("pending pods %v", s.Input.Pods)
	}
	if len(s.Input.Nodes) != 2 {
		t.Fatalf("nodes %+v", s.Input.Nodes)
	}
	existing, inFlight := s.Input.Nodes[0], s.Input.Nodes[1]
	if diff := cmp.Diff([]corev1.Taint{{Key: "team", Effect: corev1.TaintEffectNoSchedule}}, existing.Taints); diff != "" {
		t.Errorf("an uninitialized node's taints are its NodeClaim's (-want +got):\n%s", diff)
	}
	if len(existing.Pods) != 1 || existing.Pods[0].Name != "bound" {
		t.Errorf("bound pods %v", existing.Pods)
	}
	if !inFlight.InFlight || inFlight.Name != "planned" || inFlight.Labels[v1.LabelZone] != "zone-a" || inFlight.Allocatable.Cpu().String() != "2" {
		t.Errorf("in-flight %+v", inFlight)
	}
}

// Pods of a deleting node are planned for before they are evicted.
func TestBuildReschedulesPodsOfDeletingNodes(t *testing.T) {
	now := metav1.Now()
	controller := true
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "old", DeletionTimestamp: &now, Finalizers: []string{v1.TerminationFinalizer}}}
	objs := Objects{
		Nodes: []corev1.Node{node},
		Pods: []corev1.Pod{
			{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Spec: corev1.PodSpec{NodeName: "old"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "logs", OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Controller: &controller}}}, Spec: corev1.PodSpec{NodeName: "old"}},
		},
	}
	s := Build(objs, nil, []string{corev1.DefaultSchedulerName})
	if len(s.Input.Pods) != 1 || s.Input.Pods[0].Name != "app" || s.Input.Pods[0].Spec.NodeName != "" {
		t.Errorf("pods to plan %v", s.Input.Pods)
	}
	if objs.Pods[0].Spec.NodeName != "old" {
		t.Errorf("the object itself was changed")
	}
	if !s.Input.Nodes[0].Deleting {
		t.Errorf("the node is not marked deleting")
	}
}

// NodeClaims booked into a reservation but not launched yet take their
// slots out of what the reservation advertises; launched ones are counted
// by the cloud already. The caller's instance types stay as they were.
func TestBuildNetsBookedReservationSlots(t *testing.T) {
	it := test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8, Offerings: cloudprovider.Offerings{
		{Zone: "zone-a", CapacityType: v1.CapacityTypeOnDemand, Price: 0.1, Available: cloudprovider.Unlimited},
		{Zone: "zone-a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1", Price: 1e-8, Available: 3},
	}})
	booked := func(name, providerID string) v1.NodeClaim {
		return *test.NodeClaim(func(nc *v1.NodeClaim) {
			nc.Name = name
			nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelCapacityReservationID, Operator: corev1.NodeSelectorOpIn, Values: []string{"cr-1"}}}
			nc.Status.ProviderID = providerID
		})
	}
	objs := Objects{NodeClaims: []v1.NodeClaim{booked("planned-1", ""), booked("planned-2", ""), booked("launched", "sim://zone-a/i-1")}}
	s := Build(objs, map[string][]*cloudprovider.InstanceType{"a": {it}, "b": {it}}, nil)
	for _, pool := range []string{"a", "b"} {
		offerings := s.Input.InstanceTypes[pool][0].Offerings
		if offerings[1].Available != 1 || offerings[0].Available != cloudprovider.Unlimited {
			t.Errorf("pool %s: reserved %d, on-demand %d; want 3 - 2 booked, and on-demand untouched", pool, offerings[1].Available, offerings[0].Available)
		}
	}
	if it.Offerings[1].Available != 3 {
		t.Errorf("the caller's offering changed to %d", it.Offerings[1].Available)
	}
}
