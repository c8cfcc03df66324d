package staticpool

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/controllers/index"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/test"
)

// active counts the NodePool's NodeClaims not being deleted.
func active(g gomega.Gomega, nodePool string) int {
	claims := &v1.NodeClaimList{}
	g.Expect(env.Client.List(context.Background(), claims, client.MatchingLabels{v1.NodePoolLabelKey: nodePool})).To(gomega.Succeed())
	n := 0
	for _, nc := range claims.Items {
		if nc.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// A static NodePool launches its replicas once Ready, and follows the
// scale subresource (what `kubectl scale nodepool` writes) up to 3 and
// back down to 1; a dynamic NodePool beside it launches nothing.
func TestStaticNodePoolFollowsTheScaleSubresource(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	test.StartManager(t, env, func(mgr manager.Manager) error {
		if err := index.Register(ctx, mgr); err != nil {
			return err
		}
		counters := apply.NewCounters()
		counters.Add(scaleup.MetricNodeClaimsCreated, prometheus.NewCounterVec(prometheus.CounterOpts{Name: scaleup.MetricNodeClaimsCreated}, []string{"nodepool", "capacity_type"}))
		return New(Deps{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("test"), Clock: clk, Counters: counters}).Register(ctx, mgr)
	})
	static := test.NodePool(func(np *v1.NodePool) { np.Spec.Replicas = ptr.To[int64](1) })
	dynamic := test.NodePool()
	for _, np := range []*v1.NodePool{static, dynamic} {
		g.Expect(env.Client.Create(ctx, np)).To(gomega.Succeed())
		t.Cleanup(func() { _ = env.Client.Delete(ctx, np) })
	}

	// Not Ready yet: nothing launches, as the reference waits.
	g.Consistently(func(g gomega.Gomega) int { return active(g, static.Name) }, time.Second, 100*time.Millisecond).Should(gomega.Equal(0))
	meta.SetStatusCondition(&static.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: v1.ConditionTypeReady})
	g.Expect(env.Client.Status().Update(ctx, static)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) int { return active(g, static.Name) }).Should(gomega.Equal(1))

	scale := func(replicas int32) {
		t.Helper()
		s := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
		g.Expect(env.Client.SubResource("scale").Update(ctx, static, client.WithSubResourceBody(s))).To(gomega.Succeed())
		got := &autoscalingv1.Scale{}
		g.Expect(env.Client.SubResource("scale").Get(ctx, static, got)).To(gomega.Succeed())
		g.Expect(got.Spec.Replicas).To(gomega.Equal(replicas))
	}
	scale(3)
	g.Eventually(func(g gomega.Gomega) int { return active(g, static.Name) }).Should(gomega.Equal(3))
	g.Consistently(func(g gomega.Gomega) int { return active(g, static.Name) }, time.Second, 100*time.Millisecond).Should(gomega.Equal(3))
	scale(1)
	g.Eventually(func(g gomega.Gomega) int { return active(g, static.Name) }).Should(gomega.Equal(1))
	g.Consistently(func(g gomega.Gomega) int { return active(g, static.Name) }, time.Second, 100*time.Millisecond).Should(gomega.Equal(1))
	g.Expect(active(g, dynamic.Name)).To(gomega.Equal(0))
}
