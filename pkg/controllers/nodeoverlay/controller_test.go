package nodeoverlay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The controller, run by a manager, sets the reference's conditions
// (pkg/controllers/nodeoverlay/suite_test.go, "should fail when
// requirements overlays overlap"): of two overlays of equal weight
// setting the same price, the later name is Ready and the other conflicts
// naming it; a key RuntimeValidate refuses fails validation; and when the
// conflict goes, the conflicting overlay becomes Ready.
func TestNodeOverlayConditions(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	cloud := fake.New(
		test.InstanceType(test.InstanceTypeOptions{Name: "m5.large", CPU: 2, Memory: 8}),
		test.InstanceType(test.InstanceTypeOptions{Name: "m6g.large", CPU: 2, Memory: 8, Arch: "arm64"}),
	)
	test.StartManager(t, env, func(mgr manager.Manager) error {
		return New(Deps{Client: mgr.GetClient(), Cloud: cloud, Clock: clk}).Register(t.Context(), mgr)
	})
	arm := func(o *v1alpha1.NodeOverlay) {
		o.Spec.Requirements = []v1alpha1.NodeSelectorRequirement{{Key: v1.LabelArch, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}
		o.Spec.Weight, o.Spec.Price = ptr.To[int32](10), ptr.To("1.03")
	}
	every := func(o *v1alpha1.NodeOverlay) {
		o.Spec.Weight, o.Spec.Price = ptr.To[int32](10), ptr.To("23")
	}
	long := func(o *v1alpha1.NodeOverlay) {
		o.Spec.Requirements = []v1alpha1.NodeSelectorRequirement{{Key: "test.com/" + strings.Repeat("a", 70), Operator: corev1.NodeSelectorOpExists}}
	}
	objs := []client.Object{test.NodePool(), test.NodeOverlay("overlay-a", arm), test.NodeOverlay("overlay-b", every), test.NodeOverlay("overlay-long", long)}
	for _, obj := range objs {
		g.Expect(env.Client.Create(ctx, obj)).To(gomega.Succeed())
		t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
	}
	condition := func(name, typ string) func() *metav1.Condition {
		return func() *metav1.Condition {
			o := &v1alpha1.NodeOverlay{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, o); err != nil {
				return nil
			}
			return meta.FindStatusCondition(o.Status.Conditions, typ)
		}
	}
	status := func(status metav1.ConditionStatus, reason string) gomega.OmegaMatcher {
		return gomega.And(gomega.Not(gomega.BeNil()), gomega.HaveField("Status", status), gomega.HaveField("Reason", reason))
	}
	g.Eventually(condition("overlay-b", v1alpha1.ConditionTypeReady)).Should(status(metav1.ConditionTrue, "Ready"))
	g.Eventually(condition("overlay-a", v1alpha1.ConditionTypeValidationSucceeded)).Should(gomega.And(
		status(metav1.ConditionFalse, "Conflict"), gomega.HaveField("Message", gomega.ContainSubstring("conflict with NodeOverlay overlay-b"))))
	g.Eventually(condition("overlay-a", v1alpha1.ConditionTypeReady)).Should(status(metav1.ConditionFalse, "Conflict"))
	g.Eventually(condition("overlay-long", v1alpha1.ConditionTypeValidationSucceeded)).Should(status(metav1.ConditionFalse, "RuntimeValidation"))

	g.Expect(env.Client.Delete(ctx, objs[2])).To(gomega.Succeed())
	g.Eventually(condition("overlay-a", v1alpha1.ConditionTypeReady)).Should(status(metav1.ConditionTrue, "Ready"))
}
