package clusterstate_test

import (
	"context"
	"testing"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	"github.com/capstan-dev/capstan/pkg/buffers"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

func chunkTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		}}}},
	}
}

// List gathers a sized buffer's virtual pods, of its PodTemplate, when
// the CapacityBuffer source is on; never otherwise.
func TestListGathersBufferVirtualPods(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	ns := test.Namespace(t, env.Client)
	pt := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "chunk", Namespace: ns}, Template: chunkTemplate()}
	g.Expect(env.Client.Create(ctx, pt)).To(gomega.Succeed())
	cb := &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: "warm", Namespace: ns}, Spec: autoscalingv1beta1.CapacityBufferSpec{
		PodTemplateRef: &autoscalingv1beta1.LocalObjectRef{Name: "chunk"}, Replicas: ptr.To[int32](2)}}
	g.Expect(env.Client.Create(ctx, cb)).To(gomega.Succeed())
	src, err := clusterstate.ResolveBuffer(ctx, env.Client, env.Client, cb)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	cb.Status = buffers.Size(buffers.Input{Buffer: cb, Source: src, Now: metav1.Now().Time}).Status
	g.Expect(env.Client.Status().Update(ctx, cb)).To(gomega.Succeed())

	objs, err := clusterstate.List(ctx, env.Client, clusterstate.Sources{CapacityBuffers: true})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	var names []string
	for _, p := range objs.VirtualPods {
		if p.Namespace == ns {
			names = append(names, p.Name)
			g.Expect(state.Yields(&p)).To(gomega.BeTrue())
		}
	}
	g.Expect(names).To(gomega.Equal([]string{"warm-virtual-0", "warm-virtual-1"}))

	off, err := clusterstate.List(ctx, env.Client, clusterstate.Sources{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(off.VirtualPods).To(gomega.BeEmpty())
}

// A Deployment's template is read from its spec, its replicas through the
// scale subresource; a missing one or an unsupported kind is reported.
func TestResolveBufferScalableRef(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	ns := test.Namespace(t, env.Client)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](7), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: chunkTemplate()}}
	g.Expect(env.Client.Create(ctx, d)).To(gomega.Succeed())
	ref := func(kind, name string) *autoscalingv1beta1.CapacityBuffer {
		return &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: "warm", Namespace: ns}, Spec: autoscalingv1beta1.CapacityBufferSpec{
			ScalableRef: &autoscalingv1beta1.ScalableRef{APIGroup: "apps", Kind: kind, Name: name}}}
	}
	src, err := clusterstate.ResolveBuffer(ctx, env.Client, env.Client, ref("Deployment", "web"))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(src.ScaleReplicas).To(gomega.Equal(int32(7)))
	g.Expect(src.Template.Labels).To(gomega.Equal(map[string]string{"app": "web"}))

	missing, err := clusterstate.ResolveBuffer(ctx, env.Client, env.Client, ref("Deployment", "gone"))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(missing.Reason).To(gomega.Equal(buffers.ReasonScalableRefNotFound))

	unsupported, err := clusterstate.ResolveBuffer(ctx, env.Client, env.Client, ref("CronJob", "web"))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(unsupported.Reason).To(gomega.Equal(buffers.ReasonResolutionFailed))
}
