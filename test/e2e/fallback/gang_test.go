//go:build e2e

package fallback

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/test"
)

// A gang of 6 (scheduler-plugins' label, no CRD: all 6 together) where
// the cloud has only 4 spot c5.2xlarge: the launch's spot NodeClaims are
// released when the fifth finds no capacity, and the gang ends on 6
// on-demand nodes, with no spot NodeClaim kept (docs/batch.md, "Gangs").
func TestGangOfSixOnFourSpotFallsBackWhole(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := cluster.Client
	ns := test.Namespace(t, c)
	snc := test.SimNodeClass()
	np := pinnedPool(ns, snc, "c5.2xlarge")
	for _, o := range []client.Object{snc, np} {
		g.Expect(c.Create(ctx, o)).To(gomega.Succeed())
	}
	t.Cleanup(func() { _ = c.Delete(ctx, np); _ = c.Delete(ctx, snc) })
	for i := range 6 {
		pod := test.Pod(ns, func(p *corev1.Pod) {
			p.Name = fmt.Sprintf("train-%d", i)
			p.Labels = map[string]string{gang.PodGroupLabelKey: "train"}
			p.Spec.NodeSelector = map[string]string{v1.NodePoolLabelKey: np.Name}
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6"), corev1.ResourceMemory: resource.MustParse("4Gi")}
			p.Spec.Tolerations = []corev1.Toleration{{Key: "scenario", Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
		})
		g.Expect(c.Create(ctx, pod)).To(gomega.Succeed())
	}

	g.Eventually(func(g gomega.Gomega) {
		events := &corev1.EventList{}
		g.Expect(c.List(ctx, events)).To(gomega.Succeed())
		released := 0
		for _, e := range events.Items {
			if e.Reason == "AtomicGroupReleased" && e.InvolvedObject.Kind == "NodeClaim" {
				released++
			}
		}
		g.Expect(released).To(gomega.BeNumerically(">=", 4), "the 4 spot NodeClaims are released")
	}).WithTimeout(120 * time.Second).Should(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		list := &v1.NodeClaimList{}
		g.Expect(c.List(ctx, list, client.MatchingLabels{v1.NodePoolLabelKey: np.Name})).To(gomega.Succeed())
		kept := 0
		for _, nc := range list.Items {
			if nc.DeletionTimestamp != nil {
				continue
			}
			kept++
			g.Expect(nc.Labels[v1.CapacityTypeLabelKey]).To(gomega.Equal(v1.CapacityTypeOnDemand), "nodeclaim %s kept", nc.Name)
			g.Expect(nc.Annotations[gang.AtomicGroupAnnotationKey]).To(gomega.Equal(gang.PluginKey(ns, "train")))
		}
		g.Expect(kept).To(gomega.Equal(6))
		g.Expect(test.RunningPods(c, ns)).To(gomega.HaveLen(6))
	}).WithTimeout(90 * time.Second).Should(gomega.Succeed())
}
