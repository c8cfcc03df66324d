//go:build e2e

package fallback

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/parity"
)

// fallsBack creates a NodePool pinned to one instance type with spot and
// on-demand, one pod for it, and checks that after the spot launch fails
// the on-demand NodeClaim is created within 10 s of the failure, far
// inside the 30 s idle window: re-provisioning is immediate.
func fallsBack(t *testing.T, instanceType, wantCode string, nodeClass func(*simv1alpha1.SimNodeClass)) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := cluster.Client
	ns := test.Namespace(t, c)
	snc := test.SimNodeClass(nodeClass)
	np := pinnedPool(ns, snc, instanceType)
	script := parity.ForCluster(t, filepath.Join(cluster.Root, "sim-state.json"), controllerArgs(), np.Name)
	for _, o := range []client.Object{snc, np} {
		g.Expect(c.Create(ctx, o)).To(gomega.Succeed())
		script.Apply(t, o)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, np); _ = c.Delete(ctx, snc) })
	seen := parity.Observe(t, cluster.Config, cluster.Scheme, ns, np.Name)
	labels := map[string]string{"app": "fallback"}
	pod := test.Pod(ns, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
		p.Spec.Tolerations = []corev1.Toleration{{Key: "scenario", Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
	})
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "fallback", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec}},
	}
	g.Expect(c.Create(ctx, deploy)).To(gomega.Succeed())
	script.Apply(t, deploy)

	var failedAt time.Time
	var failure string
	g.Eventually(func(g gomega.Gomega) {
		events := &corev1.EventList{}
		g.Expect(c.List(ctx, events)).To(gomega.Succeed())
		for _, e := range events.Items {
			if e.Reason == "InsufficientCapacity" && e.InvolvedObject.Kind == "NodeClaim" && strings.HasPrefix(e.InvolvedObject.Name, np.Name) {
				failedAt, failure = e.EventTime.Time, e.Message
			}
		}
		g.Expect(failedAt.IsZero()).To(gomega.BeFalse())
	}).WithTimeout(90 * time.Second).Should(gomega.Succeed())
	if !strings.Contains(failure, wantCode) || !strings.Contains(failure, "spot/"+instanceType) {
		t.Errorf("the failure %q does not name the offerings and %s", failure, wantCode)
	}
	g.Eventually(func(g gomega.Gomega) {
		list := &v1.NodeClaimList{}
		g.Expect(c.List(ctx, list, client.MatchingLabels{v1.NodePoolLabelKey: np.Name})).To(gomega.Succeed())
		g.Expect(list.Items).To(gomega.HaveLen(1))
		nc := list.Items[0]
		g.Expect(nc.Labels[v1.CapacityTypeLabelKey]).To(gomega.Equal(v1.CapacityTypeOnDemand))
		g.Expect(nc.Annotations["capstan.dev/fallback"]).To(gomega.ContainSubstring("spot/"+instanceType), "the NodeClaim says why it is not spot")
		if d := nc.CreationTimestamp.Sub(failedAt); d > 10*time.Second {
			t.Errorf("on-demand nodeclaim created %s after the failure; want within 10s", d)
		}
		g.Expect(nc.Status.NodeName).NotTo(gomega.BeEmpty())
	}).WithTimeout(30 * time.Second).Should(gomega.Succeed())
	script.Check(t, func() parity.Outcome { return parity.FromChecker(seen, len(test.RunningPods(c, ns))) })
}

func TestSpotShortageFallsBackImmediately(t *testing.T) {
	fallsBack(t, "c4.xlarge", "InsufficientInstanceCapacity", func(*simv1alpha1.SimNodeClass) {})
}

func TestSpotMaxPriceTooLowFallsBackImmediately(t *testing.T) {
	fallsBack(t, "m5.large", "SpotMaxPriceTooLow", func(nc *simv1alpha1.SimNodeClass) { nc.Spec.SpotMaxPrice = ptr.To("0.001") })
}

// pinnedPool is a NodePool of snc pinned to one instance type, allowing
// spot and on-demand, its nodes tainted for the scenario's namespace ns.
func pinnedPool(ns string, snc *simv1alpha1.SimNodeClass, instanceType string) *v1.NodePool {
	return test.NodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = snc.Name
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "scenario", Value: ns, Effect: corev1.TaintEffectNoSchedule}}
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{instanceType}},
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}},
		}
	})
}
