package nodeclaim

import (
	"context"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// A spot node whose cluster.x-k8s.io/interruptible label is removed, or
// whose capacity-type label is changed, after it registered gets them
// back from its NodeClaim (seed 000: the label is there as long as the
// instance is interruptible); a label of its own is left alone.
func TestLostLabelsRestored(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	f := start(t)
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Spec.NodeClassRef.Name = f.class.Name
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
		nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}},
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot}},
			// Every fixture's cloud numbers its instances from one: a zone
			// no other test launches in keeps this provider ID, and so
			// this node, the NodeClaim's alone.
			{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-2c"}},
		}
	})
	g.Expect(env.Client.Create(ctx, nc)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(conditionOf(g, nc, v1.ConditionTypeLaunched).Status).To(gomega.Equal(metav1.ConditionTrue))
	}).Should(gomega.Succeed())
	launched := getClaim(g, nc)
	g.Expect(launched.Labels).To(gomega.HaveKeyWithValue(v1.InterruptibleLabelKey, "true"))

	node := joinNode(t, launched.Status.ProviderID)
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(conditionOf(g, nc, v1.ConditionTypeRegistered).Status).To(gomega.Equal(metav1.ConditionTrue))
		got := &corev1.Node{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(node), got)).To(gomega.Succeed())
		g.Expect(got.Labels).To(gomega.HaveKeyWithValue(v1.InterruptibleLabelKey, "true"))
	}).Should(gomega.Succeed())

	g.Eventually(func(g gomega.Gomega) {
		got := &corev1.Node{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(node), got)).To(gomega.Succeed())
		delete(got.Labels, v1.InterruptibleLabelKey)
		got.Labels[v1.CapacityTypeLabelKey] = v1.CapacityTypeOnDemand
		got.Labels["team"] = "web"
		g.Expect(env.Client.Update(ctx, got)).To(gomega.Succeed())
	}).Should(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		got := &corev1.Node{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(node), got)).To(gomega.Succeed())
		g.Expect(got.Labels).To(gomega.HaveKeyWithValue(v1.InterruptibleLabelKey, "true"))
		g.Expect(got.Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot))
		g.Expect(got.Labels).To(gomega.HaveKeyWithValue("team", "web"))
	}).Should(gomega.Succeed())
}
