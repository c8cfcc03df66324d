package gangrelease

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/test"
)

// A gang's launch of three where one NodeClaim is deleted (its launch
// found no capacity): the NodeClaim that runs nothing is released with an
// event, the one whose node runs a pod is kept; another launch still under
// way is left alone and the controller comes back at its timeout.
func TestReconcileReleasesAFailedLaunch(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := env.Client
	ns := test.Namespace(t, c)
	launch := test.RandomName("gpu")
	create := func(name, launchName string, size string) *v1.NodeClaim {
		nc := test.NodeClaim(func(nc *v1.NodeClaim) {
			nc.Name = name
			nc.Annotations = map[string]string{gang.AtomicGroupAnnotationKey: ns + "/train", gang.AtomicGroupSizeAnnotationKey: size, gang.AtomicGroupLaunchAnnotationKey: launchName}
			nc.Finalizers = []string{"test.capstan.dev/hold"}
		})
		g.Expect(c.Create(ctx, nc)).To(gomega.Succeed())
		t.Cleanup(func() {
			latest := &v1.NodeClaim{}
			if c.Get(ctx, client.ObjectKeyFromObject(nc), latest) == nil {
				latest.Finalizers = nil
				_ = c.Update(ctx, latest)
				_ = c.Delete(ctx, latest)
			}
		})
		return nc
	}
	idle := create(launch, launch, "3")
	busy := create(launch+"-busy", launch, "3")
	failed := create(launch+"-failed", launch, "3")
	otherName := test.RandomName("other")
	other := create(otherName, otherName, "1")

	node := test.RandomName("node")
	busy.Status.NodeName = node
	g.Expect(c.Status().Update(ctx, busy)).To(gomega.Succeed())
	pod := test.Pod(ns, func(p *corev1.Pod) { p.Spec.NodeName = node })
	g.Expect(c.Create(ctx, pod)).To(gomega.Succeed())
	g.Expect(c.Delete(ctx, failed)).To(gomega.Succeed())

	clk := clocktesting.NewFakeClock(time.Now())
	recorder := events.NewFakeRecorder(10)
	applier := apply.New(apply.Deps{Client: c, Recorder: recorder, Cloud: fake.New(), Clock: clk})
	ctrl := New(Deps{Client: c, Applier: applier, Clock: clk}, Options{LaunchTimeout: lifecycle.DefaultAtomicGroupLaunchTimeout})
	result, err := ctrl.Reconcile(ctx, reconcile.Request{})
	g.Expect(err).NotTo(gomega.HaveOccurred())

	released := &v1.NodeClaim{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(idle), released)).To(gomega.Succeed())
	g.Expect(released.DeletionTimestamp).NotTo(gomega.BeNil(), "the idle NodeClaim of the failed launch is not released")
	kept := &v1.NodeClaim{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(busy), kept)).To(gomega.Succeed())
	g.Expect(kept.DeletionTimestamp).To(gomega.BeNil(), "the NodeClaim running a pod was released")
	untouched := &v1.NodeClaim{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(other), untouched)).To(gomega.Succeed())
	g.Expect(untouched.DeletionTimestamp).To(gomega.BeNil(), "another launch under way was released")
	g.Expect(result.RequeueAfter).To(gomega.BeNumerically(">", 0))
	g.Expect(result.RequeueAfter).To(gomega.BeNumerically("<=", lifecycle.DefaultAtomicGroupLaunchTimeout))
	g.Expect(recorder.Events).To(gomega.Receive(gomega.ContainSubstring("AtomicGroupReleased")))

	// Nothing is left to release of the first launch: a second look
	// deletes nothing more.
	_, err = ctrl.Reconcile(ctx, reconcile.Request{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(busy), kept)).To(gomega.Succeed())
	g.Expect(kept.DeletionTimestamp).To(gomega.BeNil())
}
