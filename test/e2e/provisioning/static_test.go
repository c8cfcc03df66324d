//go:build e2e

package provisioning

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// `kubectl scale nodepool` on a static NodePool (docs/static.md), through
// the scale subresource as kubectl writes it: its nodes follow to 3 and
// back to 1, with no pod asking, and the scale subresource reads
// status.nodes.
func TestStaticNodePoolScales(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := test.NewGomega(t)
	c := cluster.Client
	snc := test.SimNodeClass()
	np := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Replicas = ptr.To[int64](1)
		np.Spec.Template.Spec.NodeClassRef.Name = snc.Name
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "scenario", Value: np.Name, Effect: corev1.TaintEffectNoSchedule}}
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"c5.large"}},
		}
	})
	for _, o := range []client.Object{snc, np} {
		g.Expect(c.Create(ctx, o)).To(gomega.Succeed())
	}
	t.Cleanup(func() {
		_ = c.Delete(ctx, np)
		_ = c.Delete(ctx, snc)
	})
	nodes := func(g gomega.Gomega) int {
		list := &corev1.NodeList{}
		g.Expect(c.List(ctx, list, client.MatchingLabels{v1.NodePoolLabelKey: np.Name})).To(gomega.Succeed())
		return len(list.Items)
	}
	scale := func(replicas int32) {
		t.Helper()
		g.Expect(c.SubResource("scale").Update(ctx, np, client.WithSubResourceBody(&autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}))).To(gomega.Succeed())
	}
	expect := func(n int) {
		t.Helper()
		g.Eventually(func(g gomega.Gomega) {
			g.Expect(nodes(g)).To(gomega.Equal(n))
			g.Expect(nodeClaimsOf(g, np)).To(gomega.HaveLen(n))
			s := &autoscalingv1.Scale{}
			g.Expect(c.SubResource("scale").Get(ctx, np, s)).To(gomega.Succeed())
			g.Expect(s.Status.Replicas).To(gomega.Equal(int32(n)))
		}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	}
	expect(1)
	scale(3)
	expect(3)
	scale(1)
	expect(1)
}
