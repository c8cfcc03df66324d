package nodeclaim

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/test"
)

func getClaim(g gomega.Gomega, nc *v1.NodeClaim) *v1.NodeClaim {
	got := &v1.NodeClaim{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(nc), got)).To(gomega.Succeed())
	return got
}

func conditionOf(g gomega.Gomega, nc *v1.NodeClaim, t string) metav1.Condition {
	c := meta.FindStatusCondition(getClaim(g, nc).Status.Conditions, t)
	g.Expect(c).NotTo(gomega.BeNil(), "no %s condition", t)
	return *c
}

// joinNode creates the Node of the instance providerID names, still
// carrying the unregistered taint, as a kubelet joining would.
func joinNode(t *testing.T, providerID string) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{}
	node.Name = test.RandomName("node")
	node.Spec.ProviderID = providerID
	node.Spec.Taints = []corev1.Taint{v1.UnregisteredNoExecuteTaint()}
	test.NewGomega(t).Expect(env.Client.Create(ctx, node)).To(gomega.Succeed())
	// Every fixture's simulated cloud numbers its instances from one: the
	// node must be gone, finalizer and all, before the next test launches.
	t.Cleanup(func() {
		got := &corev1.Node{}
		if env.Client.Get(ctx, client.ObjectKeyFromObject(node), got) == nil {
			patch := client.MergeFrom(got.DeepCopy())
			got.Finalizers = nil
			_ = env.Client.Patch(ctx, got, patch)
			_ = env.Client.Delete(ctx, got)
		}
	})
	return node
}

// A NodeClaim launches (Launched, not Ready), its Node registers (synced:
// finalizer, labels, no unregistered taint; Registered) and initializes
// (labelled; Initialized, Ready).
func TestLaunchRegisterInitialize(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	f := start(t)
	nc := f.claim(t)
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(conditionOf(g, nc, v1.ConditionTypeLaunched).Status).To(gomega.Equal(metav1.ConditionTrue))
		ready := conditionOf(g, nc, v1.ConditionTypeReady)
		g.Expect(ready.Status).To(gomega.Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(gomega.Equal("NotRegistered"))
		g.Expect(getClaim(g, nc).Finalizers).To(gomega.ContainElement(v1.TerminationFinalizer))
		g.Expect(eventsOf(g, nc, "Launched")).NotTo(gomega.BeEmpty())
	}).Should(gomega.Succeed())
	launched := getClaim(g, nc)
	g.Expect(launched.Labels).To(gomega.HaveKeyWithValue(v1.LabelInstanceType, "m5.large"))

	node := joinNode(t, launched.Status.ProviderID)
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(conditionOf(g, nc, v1.ConditionTypeRegistered).Status).To(gomega.Equal(metav1.ConditionTrue))
		g.Expect(getClaim(g, nc).Status.NodeName).To(gomega.Equal(node.Name))
		got := &corev1.Node{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(node), got)).To(gomega.Succeed())
		g.Expect(got.Finalizers).To(gomega.ContainElement(v1.TerminationFinalizer))
		g.Expect(got.Labels).To(gomega.HaveKeyWithValue(v1.NodeRegisteredLabelKey, "true"))
		g.Expect(got.Labels).To(gomega.HaveKeyWithValue(v1.NodePoolLabelKey, "default"))
		g.Expect(slices.ContainsFunc(got.Spec.Taints, func(t corev1.Taint) bool { return t.Key == v1.UnregisteredTaintKey })).To(gomega.BeFalse())
		g.Expect(conditionOf(g, nc, v1.ConditionTypeReady).Reason).To(gomega.Equal("NotInitialized"))
	}).Should(gomega.Succeed())

	// The node turns Ready and the API server's not-ready taint goes.
	g.Eventually(func(g gomega.Gomega) {
		got := &corev1.Node{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(node), got)).To(gomega.Succeed())
		got.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
		g.Expect(env.Client.Status().Update(ctx, got)).To(gomega.Succeed())
		got.Spec.Taints = slices.DeleteFunc(got.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
		g.Expect(env.Client.Update(ctx, got)).To(gomega.Succeed())
	}).Should(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(conditionOf(g, nc, v1.ConditionTypeInitialized).Status).To(gomega.Equal(metav1.ConditionTrue))
		ready := conditionOf(g, nc, v1.ConditionTypeReady)
		g.Expect(ready.Status).To(gomega.Equal(metav1.ConditionTrue))
		got := &corev1.Node{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(node), got)).To(gomega.Succeed())
		g.Expect(got.Labels).To(gomega.HaveKeyWithValue(v1.NodeInitializedLabelKey, "true"))
	}).Should(gomega.Succeed())
}

// A launch refused for want of capacity marks the offerings, deletes the
// NodeClaim and asks for a solve at once.
func TestInsufficientCapacityDeletes(t *testing.T) {
	g := test.NewGomega(t)
	f := start(t, simv1alpha1.LaunchFault{Code: "InsufficientInstanceCapacity"})
	nc := f.claim(t)
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(getClaim(g, nc).DeletionTimestamp).NotTo(gomega.BeNil())
		g.Expect(eventsOf(g, nc, "InsufficientCapacity")).NotTo(gomega.BeEmpty())
		g.Expect(f.replans.any()).To(gomega.BeTrue())
	}).Should(gomega.Succeed())
	if _, ok := f.unavailable.Reason(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeOnDemand, InstanceType: "m5.large", Zone: "us-west-2a"}); !ok {
		t.Error("the offering is not marked unavailable")
	}
	if n := len(f.cloud.Snapshot().Instances); n != 0 {
		t.Errorf("%d instances launched", n)
	}
}

// A launched NodeClaim whose node does not register within the
// registration timeout is deleted, with an event, and its pods planned
// again.
func TestRegistrationTimeout(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	f := start(t)
	nc := f.claim(t)
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(conditionOf(g, nc, v1.ConditionTypeLaunched).Status).To(gomega.Equal(metav1.ConditionTrue))
	}).Should(gomega.Succeed())
	g.Consistently(func(g gomega.Gomega) {
		g.Expect(getClaim(g, nc).DeletionTimestamp).To(gomega.BeNil())
	}).WithTimeout(time.Second).Should(gomega.Succeed())
	f.clock.Step(15 * time.Minute)
	// The reconcile the timeout's requeue would bring, now: the requeue
	// waits in real time, the fake clock does not.
	got := getClaim(g, nc)
	patch := client.MergeFrom(got.DeepCopy())
	got.Annotations = map[string]string{"test": "poke"}
	g.Expect(env.Client.Patch(ctx, got, patch)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(getClaim(g, nc).DeletionTimestamp).NotTo(gomega.BeNil())
		g.Expect(eventsOf(g, nc, "RegistrationTimeout")).NotTo(gomega.BeEmpty())
		// Its pods are planned again at once, as in simulate.
		g.Expect(f.replans.any()).To(gomega.BeTrue())
	}).Should(gomega.Succeed())
}
