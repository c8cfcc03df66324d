package simnodeclass

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/test"
)

// cloud stands in for the sim Cloud's reservations.
type cloud struct {
	mu           sync.Mutex
	reservations []sim.Reservation
}

func (c *cloud) Reservations() []sim.Reservation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sim.Reservation(nil), c.reservations...)
}

func (c *cloud) use(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.reservations {
		if c.reservations[i].ID == id {
			c.reservations[i].Used++
		}
	}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
}

func ids(rs []simv1alpha1.CapacityReservation) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// Run by a manager: the status lists exactly the selected, active
// reservations, and follows a spec change.
func TestSimNodeClassWithManager(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(start)
	startManager(t, func(mgr manager.Manager) error {
		return New(Deps{Client: mgr.GetClient(), Reservations: &cloud{reservations: reservations()}, Clock: clk}, Options{}).Register(t.Context(), mgr)
	})
	nc := test.SimNodeClass(withTerms(terms()...))
	create(t, nc)
	key := client.ObjectKeyFromObject(nc)

	got := &simv1alpha1.SimNodeClass{}
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		g.Expect(got.Status.CapacityReservations).To(gomega.BeComparableTo(wantReservations()))
		ready := meta.FindStatusCondition(got.Status.Conditions, simv1alpha1.ConditionTypeReady)
		g.Expect(ready).NotTo(gomega.BeNil())
		g.Expect(ready.Status).To(gomega.Equal(metav1.ConditionTrue))
		g.Expect(ready.ObservedGeneration).To(gomega.Equal(got.Generation))
	}).Should(gomega.Succeed())

	patched := got.DeepCopy()
	patched.Spec.CapacityReservationSelectorTerms = terms()[:1]
	g.Expect(env.Client.Patch(ctx, patched, client.MergeFrom(got))).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		g.Expect(ids(got.Status.CapacityReservations)).To(gomega.Equal([]string{"cr-a"}))
		ready := meta.FindStatusCondition(got.Status.Conditions, simv1alpha1.ConditionTypeReady)
		g.Expect(ready).NotTo(gomega.BeNil())
		g.Expect(ready.ObservedGeneration).To(gomega.Equal(got.Generation))
		g.Expect(ready.LastTransitionTime.Time).To(gomega.BeTemporally("==", start))
	}).Should(gomega.Succeed())
}

// Reconcile called directly with a fake clock: RequeueAfter is the time
// to the next selected reservation's end, the status follows the cloud
// with no event, and Ready keeps its transition time.
func TestReconcileFollowsReservations(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(start)
	cl := &cloud{reservations: reservations()}
	c := New(Deps{Client: env.Client, Reservations: cl, Clock: clk}, Options{RefreshPeriod: time.Hour})
	nc := test.SimNodeClass(withTerms(terms()...))
	create(t, nc)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: nc.Name}}
	got := &simv1alpha1.SimNodeClass{}
	reconcileAndGet := func() reconcile.Result {
		t.Helper()
		res, err := c.Reconcile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Get(ctx, req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		return res
	}

	res := reconcileAndGet()
	g.Expect(res.RequeueAfter).To(gomega.Equal(10*time.Minute), "cr-a ends in 10m; cr-c ends sooner but is not selected")
	if diff := cmp.Diff(wantReservations(), got.Status.CapacityReservations); diff != "" {
		t.Errorf("reservations (-want +got):\n%s", diff)
	}
	firstTransition := meta.FindStatusCondition(got.Status.Conditions, simv1alpha1.ConditionTypeReady).LastTransitionTime

	// Four minutes on, an instance launched into cr-a: no event, the
	// refresh picks it up.
	clk.Step(4 * time.Minute)
	cl.use("cr-a")
	res = reconcileAndGet()
	g.Expect(res.RequeueAfter).To(gomega.Equal(6 * time.Minute))
	g.Expect(got.Status.CapacityReservations[0].AvailableInstanceCount).To(gomega.Equal(2))
	ready := meta.FindStatusCondition(got.Status.Conditions, simv1alpha1.ConditionTypeReady)
	g.Expect(ready.LastTransitionTime).To(gomega.Equal(firstTransition))

	// At cr-a's end it leaves the status; cr-e starts ten minutes later.
	clk.Step(6 * time.Minute)
	res = reconcileAndGet()
	g.Expect(res.RequeueAfter).To(gomega.Equal(10 * time.Minute))
	g.Expect(ids(got.Status.CapacityReservations)).To(gomega.Equal([]string{"cr-b"}))

	// Nothing changed: nothing written.
	before := got.ResourceVersion
	reconcileAndGet()
	g.Expect(got.ResourceVersion).To(gomega.Equal(before))

	// The default refresh period, and a deleted SimNodeClass is no error.
	res, err := New(Deps{Client: env.Client, Reservations: &cloud{}, Clock: clk}, Options{}).Reconcile(ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.RequeueAfter).To(gomega.Equal(DefaultRefreshPeriod))
	g.Expect(env.Client.Delete(ctx, nc)).To(gomega.Succeed())
	res, err = c.Reconcile(ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res).To(gomega.Equal(reconcile.Result{}))
}
