//go:build e2e

package provisioning

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// A NodeOverlay's price makes the solver choose another type
// (docs/overlay.md): of m6i.large ($0.096) and m7g.large ($0.0816), the
// overlay prices m6i.large at $0.05 for this NodePool only, so its node
// is an m6i.large from the first launch, and the overlay is Ready.
func TestNodeOverlayPriceChoosesTheType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := test.NewGomega(t)
	sc := scenario(t, func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m6i.large", "m7g.large"}},
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}},
		}
	})
	o := test.NodeOverlay(sc.np.Name+"-reserved", func(o *v1alpha1.NodeOverlay) {
		o.Spec.Requirements = []v1alpha1.NodeSelectorRequirement{
			{Key: v1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{sc.np.Name}},
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m6i.large"}},
		}
		o.Spec.Price = ptr.To("0.05")
	})
	g.Expect(cluster.Client.Create(ctx, o)).To(gomega.Succeed())
	t.Cleanup(func() { _ = cluster.Client.Delete(ctx, o) })
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(gomega.Succeed())
		g.Expect(meta.IsStatusConditionTrue(o.Status.Conditions, v1alpha1.ConditionTypeReady)).To(gomega.BeTrue(), "%+v", o.Status.Conditions)
	}).WithTimeout(30 * time.Second).Should(gomega.Succeed())
	sc.create(t, deployment(sc.ns, 1, "1", "1Gi"))
	g.Eventually(func(g gomega.Gomega) {
		claims := nodeClaimsOf(g, sc.np)
		g.Expect(claims).To(gomega.HaveLen(1))
		g.Expect(claims[0].Labels[v1.LabelInstanceType]).To(gomega.Equal("m6i.large"))
		g.Expect(claims[0].Status.NodeName).NotTo(gomega.BeEmpty())
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
}
