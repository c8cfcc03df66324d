package garbagecollection

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/test"
)

// One collection against the API server: the instance no NodeClaim owns
// is terminated and its Node deleted, the NodeClaim whose instance is
// gone is deleted, and the owned pair is left alone.
func TestReconcileCollects(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := env.Client
	cloud := fake.New(test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8}))
	launch := func(name string) *v1.NodeClaim {
		nc := test.NodeClaim(func(nc *v1.NodeClaim) { nc.Name = test.RandomName(name) })
		out, err := cloud.Create(ctx, nc)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		return out
	}
	record := func(nc *v1.NodeClaim, providerID string) *v1.NodeClaim {
		obj := test.NodeClaim(func(o *v1.NodeClaim) { o.Name = nc.Name })
		g.Expect(c.Create(ctx, obj)).To(gomega.Succeed())
		obj.Status.ProviderID = providerID
		obj.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched", LastTransitionTime: metav1.Now()}}
		g.Expect(c.Status().Update(ctx, obj)).To(gomega.Succeed())
		t.Cleanup(func() { _ = c.Delete(ctx, obj) })
		return obj
	}
	leaked := launch("leaked")
	leakedNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: test.RandomName("leaked-node")}, Spec: corev1.NodeSpec{ProviderID: leaked.Status.ProviderID}}
	g.Expect(c.Create(ctx, leakedNode)).To(gomega.Succeed())
	owned := launch("owned")
	ownedNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: test.RandomName("owned-node")}, Spec: corev1.NodeSpec{ProviderID: owned.Status.ProviderID}}
	g.Expect(c.Create(ctx, ownedNode)).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, ownedNode) })
	ownedClaim := record(owned, owned.Status.ProviderID)
	orphan := record(test.NodeClaim(), "fake://zone-a/gone")

	clk := clocktesting.NewFakeClock(time.Now().Add(time.Hour))
	applier := apply.New(apply.Deps{Client: c, Recorder: events.NewFakeRecorder(10), Cloud: cloud, Clock: clk})
	gc := New(Deps{Client: c, Cloud: cloud, Applier: applier, Clock: clk}, Options{Interval: time.Minute, Grace: time.Minute})
	result, err := gc.Reconcile(ctx, reconcile.Request{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(result.RequeueAfter).To(gomega.Equal(time.Minute))

	g.Expect(cloud.Created).NotTo(gomega.HaveKey(leaked.Status.ProviderID))
	err = c.Get(ctx, client.ObjectKeyFromObject(leakedNode), &corev1.Node{})
	g.Expect(errors.IsNotFound(err)).To(gomega.BeTrue(), "the leaked instance's node is still there: %v", err)
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ownedNode), &corev1.Node{})).To(gomega.Succeed())
	g.Expect(cloud.Created).To(gomega.HaveKey(owned.Status.ProviderID))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ownedClaim), &v1.NodeClaim{})).To(gomega.Succeed())
	err = c.Get(ctx, client.ObjectKeyFromObject(orphan), &v1.NodeClaim{})
	g.Expect(errors.IsNotFound(err)).To(gomega.BeTrue(), "the orphaned nodeclaim is still there: %v", err)
}
