package capacitybuffer

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	"github.com/capstan-dev/capstan/pkg/buffers"
	"github.com/capstan-dev/capstan/pkg/test"
)

func template() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		}}}},
	}
}

// start runs the controller in a manager; the returned counter counts the
// solves it asked the provisioner for.
func start(t *testing.T) (*Controller, *atomic.Int32) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC))
	solves := &atomic.Int32{}
	var c *Controller
	test.StartManager(t, env, func(mgr manager.Manager) error {
		c = New(Deps{Client: mgr.GetClient(), Clock: clk, Trigger: func() { solves.Add(1) }})
		return c.Register(t.Context(), mgr)
	})
	return c, solves
}

func condition(g gomega.Gomega, key types.NamespacedName, typ string) func() string {
	return func() string {
		cb := &autoscalingv1beta1.CapacityBuffer{}
		if err := env.Client.Get(context.Background(), key, cb); err != nil {
			return err.Error()
		}
		c := meta.FindStatusCondition(cb.Status.Conditions, typ)
		if c == nil {
			return "none"
		}
		return string(c.Status) + "/" + c.Reason
	}
}

func replicas(key types.NamespacedName) func() int32 {
	return func() int32 {
		cb := &autoscalingv1beta1.CapacityBuffer{}
		if err := env.Client.Get(context.Background(), key, cb); err != nil {
			return -1
		}
		return ptr.Deref(cb.Status.Replicas, -1)
	}
}

// A buffer of a PodTemplate: resolved and sized, the provisioner asked to
// solve; a template that goes is reported; the provisioner's placement
// sets Provisioning (the reference's conditions and reasons,
// pkg/controllers/capacitybuffer and pkg/controllers/provisioning/buffers.go).
func TestBufferStatus(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	c, solves := start(t)
	ns := test.Namespace(t, env.Client)
	pt := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "chunk", Namespace: ns}, Template: template()}
	g.Expect(env.Client.Create(ctx, pt)).To(gomega.Succeed())
	cb := &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: "warm", Namespace: ns}, Spec: autoscalingv1beta1.CapacityBufferSpec{
		PodTemplateRef: &autoscalingv1beta1.LocalObjectRef{Name: "chunk"}, Replicas: ptr.To[int32](8),
		Limits: autoscalingv1beta1.Limits{corev1.ResourceCPU: resource.MustParse("3")}}}
	g.Expect(env.Client.Create(ctx, cb)).To(gomega.Succeed())
	key := client.ObjectKeyFromObject(cb)

	g.Eventually(condition(g, key, autoscalingv1beta1.ConditionReadyForProvisioning)).Should(gomega.Equal("True/" + buffers.ReasonResolved))
	g.Eventually(replicas(key)).Should(gomega.Equal(int32(3)), "8 replicas capped by 3 cpu of 1-cpu chunks")
	g.Eventually(solves.Load).Should(gomega.BeNumerically(">", 0))

	c.Placed(map[types.NamespacedName]buffers.Placement{key: {Existing: map[string]int{"a": 2}, New: 1}})
	g.Eventually(condition(g, key, autoscalingv1beta1.ConditionProvisioning)).Should(gomega.Equal("False/" + buffers.ReasonRequiresNewCapacity))
	c.Placed(map[types.NamespacedName]buffers.Placement{key: {Existing: map[string]int{"a": 2, "b": 1}}})
	g.Eventually(condition(g, key, autoscalingv1beta1.ConditionProvisioning)).Should(gomega.Equal("True/" + buffers.ReasonFitsExistingCapacity))

	g.Expect(env.Client.Delete(ctx, pt)).To(gomega.Succeed())
	g.Eventually(condition(g, key, autoscalingv1beta1.ConditionReadyForProvisioning)).Should(gomega.Equal("False/" + buffers.ReasonPodTemplateNotFound))
	g.Eventually(condition(g, key, autoscalingv1beta1.ConditionProvisioning)).Should(gomega.Equal("False/" + buffers.ReasonNotReadyForProvisioning))
}

// A percentage of a Deployment, read through its scale subresource.
func TestBufferOfADeployment(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	start(t)
	ns := test.Namespace(t, env.Client)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](10), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: template()}}
	g.Expect(env.Client.Create(ctx, d)).To(gomega.Succeed())
	cb := &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: "warm", Namespace: ns}, Spec: autoscalingv1beta1.CapacityBufferSpec{
		ScalableRef: &autoscalingv1beta1.ScalableRef{APIGroup: "apps", Kind: "Deployment", Name: "web"}, Percentage: ptr.To[int32](25)}}
	g.Expect(env.Client.Create(ctx, cb)).To(gomega.Succeed())
	key := client.ObjectKeyFromObject(cb)
	g.Eventually(replicas(key)).Should(gomega.Equal(int32(3)), "25% of 10, rounded up")

	missing := &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: "lost", Namespace: ns}, Spec: autoscalingv1beta1.CapacityBufferSpec{
		ScalableRef: &autoscalingv1beta1.ScalableRef{APIGroup: "apps", Kind: "StatefulSet", Name: "db"}, Replicas: ptr.To[int32](1)}}
	g.Expect(env.Client.Create(ctx, missing)).To(gomega.Succeed())
	g.Eventually(condition(g, client.ObjectKeyFromObject(missing), autoscalingv1beta1.ConditionReadyForProvisioning)).Should(gomega.Equal("False/" + buffers.ReasonScalableRefNotFound))
}
