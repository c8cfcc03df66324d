package nodepool

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/admission"
	"github.com/capstan-dev/capstan/pkg/test"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func qty(q resource.Quantity) string { return q.String() }

// expectCondition asserts np carries condition typ with status and reason
// for its current generation.
func expectCondition(g gomega.Gomega, np *v1.NodePool, typ string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	c := meta.FindStatusCondition(np.Status.Conditions, typ)
	g.Expect(c).NotTo(gomega.BeNil(), "condition %s", typ)
	g.Expect(c.Status).To(gomega.Equal(status), "condition %s: %+v", typ, c)
	g.Expect(c.Reason).To(gomega.Equal(reason), "condition %s: %+v", typ, c)
	g.Expect(c.ObservedGeneration).To(gomega.Equal(np.Generation), "condition %s", typ)
	return c
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
}

// The controller, run by a manager: hash annotations follow the template,
// status.resources follows the NodeClaims, and the NodePool becomes Ready
// once its SimNodeClass exists and is Ready.
func TestNodePoolWithManager(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(start)
	startManager(t, func(mgr manager.Manager) error {
		return New(Deps{Client: mgr.GetClient(), Clock: clk, Recorder: mgr.GetEventRecorder("test")}, Options{NodeClasses: simKinds}).Register(t.Context(), mgr)
	})

	className := test.RandomName("simnodeclass")
	np := test.NodePool(func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = className })
	create(t, np)
	key := client.ObjectKeyFromObject(np)

	got := &v1.NodePool{}
	var firstHash string
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		firstHash = got.Annotations[v1.NodePoolHashAnnotationKey]
		g.Expect(firstHash).To(gomega.Equal(got.Hash()))
		g.Expect(got.Annotations).To(gomega.HaveKeyWithValue(v1.NodePoolHashVersionAnnotationKey, v1.NodePoolHashVersion))
		expectCondition(g, got, v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded)
		c := expectCondition(g, got, v1.ConditionTypeNodeClassReady, metav1.ConditionFalse, ReasonNodeClassNotFound)
		g.Expect(c.Message).To(gomega.ContainSubstring(className))
		g.Expect(c.LastTransitionTime.Time).To(gomega.BeTemporally("==", start))
		expectCondition(g, got, v1.ConditionTypeReady, metav1.ConditionFalse, ReasonNodeClassNotFound)
		g.Expect(got.Status.Resources).To(gomega.HaveKeyWithValue(ResourceNodes, gomega.WithTransform(qty, gomega.Equal("0"))))
	}).Should(gomega.Succeed())

	// A template change changes the hash and the conditions' generation.
	patched := got.DeepCopy()
	patched.Spec.Template.ObjectMeta.Labels = map[string]string{"team": "search"}
	g.Expect(env.Client.Patch(ctx, patched, client.MergeFrom(got))).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		g.Expect(got.Annotations[v1.NodePoolHashAnnotationKey]).To(gomega.And(gomega.Equal(got.Hash()), gomega.Not(gomega.Equal(firstHash))))
		expectCondition(g, got, v1.ConditionTypeReady, metav1.ConditionFalse, ReasonNodeClassNotFound)
	}).Should(gomega.Succeed())

	// Two NodeClaims of this NodePool and one of another: the status sums
	// the two capacities and counts two nodes.
	for _, c := range []struct{ pool, capacity string }{{np.Name, "4"}, {np.Name, "8"}, {"other", "100"}} {
		nc := test.NodeClaim(func(nc *v1.NodeClaim) { nc.Labels = map[string]string{v1.NodePoolLabelKey: c.pool} })
		create(t, nc)
		nc.Status.Capacity = rl("cpu", c.capacity, "memory", c.capacity+"Gi", "pods", "58")
		g.Expect(env.Client.Status().Update(ctx, nc)).To(gomega.Succeed())
	}
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		g.Expect(got.Status.Resources).To(gomega.HaveLen(4))
		for name, want := range map[string]string{"cpu": "12", "memory": "12Gi", "pods": "116", "nodes": "2"} {
			g.Expect(got.Status.Resources).To(gomega.HaveKeyWithValue(corev1.ResourceName(name), gomega.WithTransform(qty, gomega.Equal(want))))
		}
	}).Should(gomega.Succeed())

	// The SimNodeClass appears, then turns Ready: so does the NodePool.
	clk.Step(time.Minute)
	class := test.SimNodeClass(func(nc *simv1alpha1.SimNodeClass) { nc.Name = className })
	create(t, class)
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		expectCondition(g, got, v1.ConditionTypeNodeClassReady, metav1.ConditionFalse, ReasonNodeClassNotReady)
	}).Should(gomega.Succeed())
	readyClass := class.DeepCopy()
	readyClass.Status.Conditions = []metav1.Condition{{
		Type: simv1alpha1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.NewTime(start),
	}}
	g.Expect(env.Client.Status().Patch(ctx, readyClass, client.MergeFrom(class))).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		expectCondition(g, got, v1.ConditionTypeNodeClassReady, metav1.ConditionTrue, v1.ConditionTypeNodeClassReady)
		c := expectCondition(g, got, v1.ConditionTypeReady, metav1.ConditionTrue, v1.ConditionTypeReady)
		g.Expect(c.LastTransitionTime.Time).To(gomega.BeTemporally("==", start.Add(time.Minute)))
	}).Should(gomega.Succeed())
}

// Reconcile called directly: a schedule or time zone the CRD lets through
// but that cannot be evaluated fails validation, and with it Ready.
func TestInvalidBudgets(t *testing.T) {
	cases := []struct {
		name    string
		mod     func(*v1.NodePool)
		reason  string
		message string
	}{
		{"minute 61", withBudgets("@daily", "61 * * * *"), admission.ReasonInvalidBudgetSchedule, `spec.disruption.budgets[1].schedule "61 * * * *"`},
		{"unknown time zone", withTimeZone("Europe/Atlantis"), admission.ReasonInvalidBudgetTimeZone, `"Europe/Atlantis" is not an IANA time zone`},
		{"unknown rebalance", func(np *v1.NodePool) {
			np.Annotations = map[string]string{v1.RebalanceAnnotationKey: "Replace"}
		}, admission.ReasonInvalidRebalance, `annotation capstan.dev/rebalance: "Replace" is not "replace" or "event"`},
		{"unknown return-to-preferred", func(np *v1.NodePool) {
			np.Annotations = map[string]string{v1.ReturnToPreferredAnnotationKey: "enabled"}
		}, admission.ReasonInvalidReturnToPreferred, `annotation capstan.dev/return-to-preferred: "enabled" is not "Enabled" or "Disabled"`},
		{"return-to-preferred-after not a duration", func(np *v1.NodePool) {
			np.Annotations = map[string]string{v1.ReturnToPreferredAfterAnnotationKey: "soon"}
		}, admission.ReasonInvalidReturnToPreferred, `annotation capstan.dev/return-to-preferred-after: "soon" is not a positive duration`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := test.NewGomega(t)
			ctx := context.Background()
			np := test.NodePool(tc.mod)
			create(t, np)
			c := New(Deps{Client: env.Client, Clock: clocktesting.NewFakeClock(start), Recorder: events.NewFakeRecorder(10)}, Options{NodeClasses: simKinds})
			_, err := c.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: np.Name}})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			got := &v1.NodePool{}
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(np), got)).To(gomega.Succeed())
			v := expectCondition(g, got, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, tc.reason)
			g.Expect(v.Message).To(gomega.ContainSubstring(tc.message))
			r := expectCondition(g, got, v1.ConditionTypeReady, metav1.ConditionFalse, tc.reason)
			g.Expect(r.Message).To(gomega.ContainSubstring(tc.message))
		})
	}
}

// A second reconcile with nothing changed writes nothing, even later;
// a deleted NodePool is no error.
func TestReconcileIsIdempotent(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(start)
	c := New(Deps{Client: env.Client, Clock: clk, Recorder: events.NewFakeRecorder(10)}, Options{NodeClasses: simKinds})
	np := test.NodePool(func(np *v1.NodePool) { np.Spec.Weight = ptr.To[int32](5) })
	create(t, np)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: np.Name}}
	res, err := c.Reconcile(ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res).To(gomega.Equal(reconcile.Result{}))
	first := &v1.NodePool{}
	g.Expect(env.Client.Get(ctx, req.NamespacedName, first)).To(gomega.Succeed())
	g.Expect(first.Annotations).To(gomega.HaveKey(v1.NodePoolHashAnnotationKey))

	clk.Step(time.Hour)
	_, err = c.Reconcile(ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	second := &v1.NodePool{}
	g.Expect(env.Client.Get(ctx, req.NamespacedName, second)).To(gomega.Succeed())
	g.Expect(second.ResourceVersion).To(gomega.Equal(first.ResourceVersion), "a reconcile without change wrote the NodePool")

	g.Expect(env.Client.Delete(ctx, np)).To(gomega.Succeed())
	_, err = c.Reconcile(ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
}

// A NodePool pointing at a NodeClass kind the provider does not serve, or
// at a SimNodeClass that does not exist, is not Ready, and says why in a
// warning event, once per change.
func TestNodeClassProblemsAreReported(t *testing.T) {
	cases := []struct {
		name    string
		ref     v1.NodeClassReference
		reason  string
		message string
	}{
		{"another provider's kind", v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}, ReasonUnsupportedNodeClass, "EC2NodeClass karpenter.k8s.aws/default is not supported"},
		{"a missing SimNodeClass", v1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: "absent"}, ReasonNodeClassNotFound, `SimNodeClass "absent" not found`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := test.NewGomega(t)
			ctx := context.Background()
			np := test.NodePool(func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef = &tc.ref })
			create(t, np)
			recorder := events.NewFakeRecorder(10)
			c := New(Deps{Client: env.Client, Clock: clocktesting.NewFakeClock(start), Recorder: recorder}, Options{NodeClasses: simKinds})
			req := reconcile.Request{NamespacedName: types.NamespacedName{Name: np.Name}}
			for range 2 {
				_, err := c.Reconcile(ctx, req)
				g.Expect(err).NotTo(gomega.HaveOccurred())
			}
			got := &v1.NodePool{}
			g.Expect(env.Client.Get(ctx, req.NamespacedName, got)).To(gomega.Succeed())
			cond := expectCondition(g, got, v1.ConditionTypeNodeClassReady, metav1.ConditionFalse, tc.reason)
			g.Expect(cond.Message).To(gomega.ContainSubstring(tc.message))
			expectCondition(g, got, v1.ConditionTypeReady, metav1.ConditionFalse, tc.reason)
			g.Expect(recorder.Events).To(gomega.HaveLen(1), "one event for one change")
			g.Expect(<-recorder.Events).To(gomega.And(gomega.HavePrefix("Warning "+tc.reason), gomega.ContainSubstring(tc.message)))
		})
	}
}
