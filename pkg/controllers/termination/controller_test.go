package termination

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim/simapi"
	"github.com/capstan-dev/capstan/pkg/controllers/index"
	"github.com/capstan-dev/capstan/pkg/test"
)

// A node's VolumeAttachments hold the instance: it is terminated only once
// they are gone, and then the NodeClaim and the Node go too.
func TestVolumeAttachmentsBlockTermination(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := env.Client
	snc := test.SimNodeClass()
	g.Expect(c.Create(ctx, snc)).To(gomega.Succeed())
	profile, err := sim.DefaultProfile()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	types, err := catalog.Load()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	cloud, err := sim.New(sim.Options{Profile: profile, Catalog: types, Clock: clock.RealClock{}, NodeClasses: simapi.NodeClasses{Client: c}})
	g.Expect(err).NotTo(gomega.HaveOccurred())

	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Spec.NodeClassRef.Name = snc.Name
		nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}}}
		nc.Finalizers = []string{v1.TerminationFinalizer}
	})
	g.Expect(c.Create(ctx, nc)).To(gomega.Succeed())
	launched, err := cloud.Create(ctx, nc)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	nc.Status.ProviderID = launched.Status.ProviderID
	g.Expect(c.Status().Update(ctx, nc)).To(gomega.Succeed())
	node := test.KwokNode(func(n *corev1.Node) {
		n.Spec.ProviderID = launched.Status.ProviderID
		n.Finalizers = []string{v1.TerminationFinalizer}
	})
	g.Expect(c.Create(ctx, node)).To(gomega.Succeed())
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: test.RandomName("va")},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "ebs.csi.example", NodeName: node.Name,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-1")}},
	}
	g.Expect(c.Create(ctx, va)).To(gomega.Succeed())

	test.StartManager(t, env, func(mgr manager.Manager) error {
		if err := index.Register(ctx, mgr); err != nil {
			return err
		}
		return New(Deps{Client: mgr.GetClient(), Cloud: cloud, Recorder: mgr.GetEventRecorder("test"), Clock: clock.RealClock{},
			Slack: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "slack"})}).Register(ctx, mgr)
	})
	g.Expect(c.Delete(ctx, nc)).To(gomega.Succeed())

	// Drained (no pods), tainted and deleting, but the volume holds it.
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(node), node)).To(gomega.Succeed())
		g.Expect(node.DeletionTimestamp).NotTo(gomega.BeNil())
		g.Expect(node.Spec.Taints).To(gomega.ContainElement(gomega.HaveField("Key", v1.DisruptedTaintKey)))
	}).Should(gomega.Succeed())
	running := func() bool {
		_, err := cloud.Get(ctx, launched.Status.ProviderID)
		return err == nil
	}
	g.Consistently(running).WithTimeout(2 * time.Second).Should(gomega.BeTrue())
	// The NodeClaim says so, with the reference's conditions
	// (pkg/controllers/node/termination, v1.14.1).
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(nc), nc)).To(gomega.Succeed())
	g.Expect(meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDrained)).To(gomega.SatisfyAll(gomega.Not(gomega.BeNil()),
		gomega.HaveField("Status", metav1.ConditionTrue), gomega.HaveField("Reason", "Drained")))
	g.Expect(meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeVolumesDetached)).To(gomega.SatisfyAll(gomega.Not(gomega.BeNil()),
		gomega.HaveField("Status", metav1.ConditionUnknown), gomega.HaveField("Reason", "AwaitingVolumeDetachment")))

	g.Expect(c.Delete(ctx, va)).To(gomega.Succeed())
	g.Eventually(running).Should(gomega.BeFalse())
	g.Eventually(func() bool {
		return errors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(nc), &v1.NodeClaim{})) &&
			errors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{}))
	}).Should(gomega.BeTrue())
}

// Deleting the Node deletes its NodeClaim; a Node whose NodeClaim is gone
// is released.
func TestNodeDeletionCascades(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := env.Client
	start(t, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "slack"}))

	nc := test.NodeClaim(func(nc *v1.NodeClaim) { nc.Finalizers = []string{v1.TerminationFinalizer} })
	g.Expect(c.Create(ctx, nc)).To(gomega.Succeed())
	nc.Status.ProviderID = "sim://zone/i-cascade"
	g.Expect(c.Status().Update(ctx, nc)).To(gomega.Succeed())
	node := test.KwokNode(func(n *corev1.Node) {
		n.Spec.ProviderID = nc.Status.ProviderID
		n.Finalizers = []string{v1.TerminationFinalizer}
	})
	g.Expect(c.Create(ctx, node)).To(gomega.Succeed())
	orphan := test.KwokNode(func(n *corev1.Node) {
		n.Spec.ProviderID = "sim://zone/i-none"
		n.Finalizers = []string{v1.TerminationFinalizer}
	})
	g.Expect(c.Create(ctx, orphan)).To(gomega.Succeed())

	g.Expect(c.Delete(ctx, node)).To(gomega.Succeed())
	g.Expect(c.Delete(ctx, orphan)).To(gomega.Succeed())
	g.Eventually(func() bool {
		return errors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(nc), &v1.NodeClaim{})) &&
			errors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{})) &&
			errors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(orphan), &corev1.Node{}))
	}).Should(gomega.BeTrue())
}

// An interrupted node drains by its notice's deadline: a pod whose grace
// period would outlast it is deleted at once with the time left, and the
// slack left when the drain finished is observed once.
func TestInterruptionDeadlineShortensGracePeriods(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := env.Client
	reg := prometheus.NewRegistry()
	slack, err := NewSlackMetric(reg)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	start(t, slack)
	ns := test.Namespace(t, c)
	deadline := time.Now().Add(2 * time.Minute).UTC().Truncate(time.Second)
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Finalizers = []string{v1.TerminationFinalizer}
		nc.Annotations = map[string]string{v1.NodeClaimTerminationTimestampAnnotationKey: deadline.Format(time.RFC3339)}
	})
	g.Expect(c.Create(ctx, nc)).To(gomega.Succeed())
	nc.Status.ProviderID = "sim://zone/i-interrupted"
	nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue,
		Reason: string(v1.DisruptionReasonInterrupted), Message: "interrupted (SpotInterruption)", LastTransitionTime: metav1.Now()}}
	g.Expect(c.Status().Update(ctx, nc)).To(gomega.Succeed())
	node := test.KwokNode(func(n *corev1.Node) {
		n.Spec.ProviderID = nc.Status.ProviderID
		n.Finalizers = []string{v1.TerminationFinalizer}
	})
	g.Expect(c.Create(ctx, node)).To(gomega.Succeed())
	slow := test.Pod(ns, func(p *corev1.Pod) {
		p.Spec.NodeName = node.Name
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](600)
	})
	g.Expect(c.Create(ctx, slow)).To(gomega.Succeed())

	g.Expect(c.Delete(ctx, nc)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(slow), slow)).To(gomega.Succeed())
		g.Expect(slow.DeletionTimestamp).NotTo(gomega.BeNil())
		g.Expect(*slow.DeletionGracePeriodSeconds).To(gomega.BeNumerically("<=", 120), "shortened to end by the deadline")
		g.Expect(*slow.DeletionGracePeriodSeconds).To(gomega.BeNumerically(">", 100))
	}).Should(gomega.Succeed())
	// No kubelet here: the pod ends when the test says.
	g.Expect(c.Delete(ctx, slow, client.GracePeriodSeconds(0))).To(gomega.Succeed())
	g.Eventually(func() bool {
		return errors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(nc), &v1.NodeClaim{}))
	}).Should(gomega.BeTrue())
	mfs, err := reg.Gather()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(mfs).To(gomega.HaveLen(1))
	h := mfs[0].GetMetric()[0].GetHistogram()
	g.Expect(h.GetSampleCount()).To(gomega.Equal(uint64(1)), "observed once")
	g.Expect(h.GetSampleSum()).To(gomega.BeNumerically(">", 60), "drained well before the deadline")
}

// start runs the termination controller over the default simulated
// cloud in a manager on the shared control plane.
func start(t *testing.T, slack prometheus.Observer) {
	t.Helper()
	ctx := context.Background()
	profile, _ := sim.DefaultProfile()
	types, _ := catalog.Load()
	cloud, err := sim.New(sim.Options{Profile: profile, Catalog: types, Clock: clock.RealClock{}, NodeClasses: simapi.NodeClasses{Client: env.Client}})
	if err != nil {
		t.Fatal(err)
	}
	test.StartManager(t, env, func(mgr manager.Manager) error {
		if err := index.Register(ctx, mgr); err != nil {
			return err
		}
		return New(Deps{Client: mgr.GetClient(), Cloud: cloud, Recorder: mgr.GetEventRecorder("test"), Clock: clock.RealClock{}, Slack: slack}).Register(ctx, mgr)
	})
}
