//go:build e2e

package provisioning

import (
	"context"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// A CapacityBuffer of two chunks keeps warm nodes (Provisioning True); a
// Deployment of the chunk's shape then starts on them without a new
// launch, and the buffer is refilled by new NodeClaims (docs/batch.md,
// "Capacity buffers").
func TestCapacityBufferKeepsWarmNodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := test.NewGomega(t)
	sc := scenario(t)
	ns, np := sc.ns, sc.np
	web := deployment(ns, 2, "1500m", "1Gi")
	pt := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "chunk", Namespace: ns}, Template: web.Spec.Template}
	cb := &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: "warm", Namespace: ns}, Spec: autoscalingv1beta1.CapacityBufferSpec{
		PodTemplateRef: &autoscalingv1beta1.LocalObjectRef{Name: "chunk"}, Replicas: ptr.To[int32](2)}}
	for _, o := range []client.Object{pt, cb} {
		g.Expect(cluster.Client.Create(ctx, o)).To(gomega.Succeed())
	}
	provisioning := func() string {
		got := &autoscalingv1beta1.CapacityBuffer{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(cb), got); err != nil {
			return err.Error()
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, autoscalingv1beta1.ConditionProvisioning); c != nil {
			return string(c.Status) + "/" + c.Reason
		}
		return "none"
	}
	initialized := func() []v1.NodeClaim {
		var out []v1.NodeClaim
		for _, nc := range nodeClaimsOf(g, np) {
			if meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeInitialized) {
				out = append(out, nc)
			}
		}
		return out
	}
	g.Eventually(provisioning).Should(gomega.Equal("True/FitsExistingCapacity"))
	warm := nodeClaimsOf(g, np)
	g.Expect(warm).NotTo(gomega.BeEmpty())
	g.Eventually(func() int { return len(initialized()) }).Should(gomega.Equal(len(warm)), "the buffer's nodes come up")
	warmNodes := map[string]bool{}
	for _, nc := range initialized() {
		warmNodes[nc.Status.NodeName] = true
	}

	g.Expect(cluster.Client.Create(ctx, web)).To(gomega.Succeed())
	g.Eventually(func() []corev1.Pod { return test.RunningPods(cluster.Client, ns) }).Should(gomega.HaveLen(2))
	for _, p := range test.RunningPods(cluster.Client, ns) {
		g.Expect(warmNodes).To(gomega.HaveKey(p.Spec.NodeName), "pod %s started on %s, not on the warm capacity", p.Name, p.Spec.NodeName)
	}
	// Refilled: new capacity for the buffer's two chunks, up and holding.
	g.Eventually(func() int { return len(initialized()) }).Should(gomega.BeNumerically(">", len(warm)))
	g.Eventually(provisioning).Should(gomega.Equal("True/FitsExistingCapacity"))
}
