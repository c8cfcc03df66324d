package provisioningrequest

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/provreq"
	"github.com/capstan-dev/capstan/pkg/test"
)

// harness is the controller on the real API server, with a fake clock
// and a fake cloud offering 4-core nodes to a NodePool limited to 8 cores.
type harness struct {
	t        *testing.T
	g        gomega.Gomega
	ns       string
	clk      *clocktesting.FakeClock
	c        *Controller
	triggers int
}

func newHarness(t *testing.T) *harness {
	g := test.NewGomega(t)
	ctx := context.Background()
	h := &harness{t: t, g: g, ns: test.Namespace(t, env.Client), clk: clocktesting.NewFakeClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))}
	np := test.NodePool(func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("8")} })
	g.Expect(env.Client.Create(ctx, np)).To(gomega.Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, np) })
	cloud := fake.New(test.InstanceType(test.InstanceTypeOptions{Name: "c.xlarge", CPU: 4, Memory: 16}))
	counters := apply.NewCounters()
	counters.AddHistogram(provreq.MetricProvisionedSeconds, prometheus.NewHistogram(prometheus.HistogramOpts{Name: provreq.MetricProvisionedSeconds}))
	applier := apply.New(apply.Deps{Client: env.Client, Recorder: events.NewFakeRecorder(100), Counters: counters, Clock: h.clk,
		Trigger: func(effects.TriggerSolve) { h.triggers++ }})
	h.c = New(Deps{Client: env.Client, Cluster: &clusterstate.Cluster{Client: env.Client, Cloud: cloud, SchedulerNames: []string{corev1.DefaultSchedulerName}},
		Applier: applier, Clock: h.clk}, provreq.Options{})
	return h
}

// request creates a PodTemplate of 3-core workers and a request for count
// of them.
func (h *harness) request(class string, count int32) *autoscalingv1.ProvisioningRequest {
	ctx := context.Background()
	tmpl := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "workers"}}
	tmpl.Template.Spec.Containers = []corev1.Container{{Name: "w", Image: "w", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")},
	}}}
	if err := env.Client.Create(ctx, tmpl); err != nil {
		h.g.Expect(client.IgnoreAlreadyExists(err)).To(gomega.Succeed())
	}
	pr := &autoscalingv1.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: test.RandomName("job")}}
	pr.Spec.ProvisioningClassName = class
	pr.Spec.PodSets = []autoscalingv1.PodSet{{PodTemplateRef: autoscalingv1.Reference{Name: "workers"}, Count: count}}
	h.g.Expect(env.Client.Create(ctx, pr)).To(gomega.Succeed())
	// The fake clock starts where the API server stamped the request.
	h.clk.SetTime(pr.CreationTimestamp.Time)
	return pr
}

// reconcile runs the controller once and returns the request as stored.
func (h *harness) reconcile(pr *autoscalingv1.ProvisioningRequest) (*autoscalingv1.ProvisioningRequest, time.Duration) {
	h.t.Helper()
	key := types.NamespacedName{Namespace: pr.Namespace, Name: pr.Name}
	res, err := h.c.Reconcile(context.Background(), reconcile.Request{NamespacedName: key})
	h.g.Expect(err).NotTo(gomega.HaveOccurred())
	got := &autoscalingv1.ProvisioningRequest{}
	h.g.Expect(env.Client.Get(context.Background(), key, got)).To(gomega.Succeed())
	return got, res.RequeueAfter
}

type condition struct{ Type, Status, Reason string }

func conditions(pr *autoscalingv1.ProvisioningRequest) []condition {
	var out []condition
	for _, c := range pr.Status.Conditions {
		out = append(out, condition{c.Type, string(c.Status), c.Reason})
	}
	return out
}

func TestCheckCapacity(t *testing.T) {
	h := newHarness(t)
	fits, _ := h.reconcile(h.request(autoscalingv1.ProvisioningClassCheckCapacity, 2))
	h.g.Expect(conditions(fits)).To(gomega.Equal([]condition{
		{autoscalingv1.Accepted, "True", provreq.ReasonAccepted},
		{autoscalingv1.Provisioned, "True", provreq.ReasonCapacityIsFound},
	}))
	tooMany, requeue := h.reconcile(h.request(autoscalingv1.ProvisioningClassCheckCapacity, 3))
	h.g.Expect(conditions(tooMany)).To(gomega.Equal([]condition{
		{autoscalingv1.Accepted, "True", provreq.ReasonAccepted},
		{autoscalingv1.Provisioned, "False", provreq.ReasonCapacityIsNotFound},
	}))
	h.g.Expect(requeue).To(gomega.Equal(provreq.DefaultRetryInterval))
	h.g.Expect(h.triggers).To(gomega.Equal(0), "a check launches nothing")
}

func TestUnknownClassIsLeftAlone(t *testing.T) {
	h := newHarness(t)
	got, requeue := h.reconcile(h.request("queued-provisioning.gke.io", 1))
	h.g.Expect(got.Status.Conditions).To(gomega.BeEmpty())
	h.g.Expect(requeue).To(gomega.BeZero())
}

// An atomic request: the provisioner is asked to launch; Provisioned once
// every NodeClaim of its group registered; its booking expires ten
// minutes later.
func TestAtomicRequestProvisionedThenBookingExpires(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	pr := h.request(autoscalingv1.ProvisioningClassBestEffortAtomicScaleUp, 2)
	got, _ := h.reconcile(pr)
	h.g.Expect(conditions(got)).To(gomega.Equal([]condition{
		{autoscalingv1.Accepted, "True", provreq.ReasonAccepted},
		{autoscalingv1.Provisioned, "False", provreq.ReasonNodeClaimsLaunching},
	}))
	h.g.Expect(h.triggers).To(gomega.Equal(1))

	var claims []*v1.NodeClaim
	for range 2 {
		nc := test.NodeClaim(func(nc *v1.NodeClaim) {
			nc.Annotations = map[string]string{gang.AtomicGroupAnnotationKey: provreq.Key(pr), gang.AtomicGroupSizeAnnotationKey: "2"}
		})
		h.g.Expect(env.Client.Create(ctx, nc)).To(gomega.Succeed())
		t.Cleanup(func() { _ = env.Client.Delete(ctx, nc) })
		claims = append(claims, nc)
	}
	register := func(nc *v1.NodeClaim) {
		meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched"})
		meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeRegistered, Status: metav1.ConditionTrue, Reason: "Registered"})
		h.g.Expect(env.Client.Status().Update(ctx, nc)).To(gomega.Succeed())
	}
	register(claims[0])
	got, _ = h.reconcile(pr)
	h.g.Expect(meta.FindStatusCondition(got.Status.Conditions, autoscalingv1.Provisioned).Message).To(gomega.Equal("1 of 2 NodeClaims registered"))

	h.clk.Step(30 * time.Second)
	register(claims[1])
	got, requeue := h.reconcile(pr)
	h.g.Expect(conditions(got)).To(gomega.ContainElement(condition{autoscalingv1.Provisioned, "True", provreq.ReasonCapacityIsProvisioned}))
	h.g.Expect(requeue).To(gomega.Equal(provreq.DefaultBookingDuration))

	h.clk.Step(provreq.DefaultBookingDuration)
	got, _ = h.reconcile(pr)
	h.g.Expect(conditions(got)).To(gomega.ContainElement(condition{autoscalingv1.BookingExpired, "True", provreq.ReasonReservationExpired}))
}

// The CRD as sig-autoscaling publishes it keeps a request's spec
// immutable: each of its rules refuses a change.
func TestSpecIsImmutable(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	for name, change := range map[string]func(*autoscalingv1.ProvisioningRequest){
		"podSets":               func(pr *autoscalingv1.ProvisioningRequest) { pr.Spec.PodSets[0].Count = 5 },
		"provisioningClassName": func(pr *autoscalingv1.ProvisioningRequest) { pr.Spec.ProvisioningClassName = "other.example.com" },
		"parameters": func(pr *autoscalingv1.ProvisioningRequest) {
			pr.Spec.Parameters = map[string]autoscalingv1.Parameter{provreq.ParameterValidUntilSeconds: "60"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			pr := h.request(autoscalingv1.ProvisioningClassCheckCapacity, 1)
			if name == "parameters" {
				// A rule on an absent field is not evaluated: start with one.
				pr.Spec.Parameters = map[string]autoscalingv1.Parameter{provreq.ParameterValidUntilSeconds: "30"}
				h.g.Expect(env.Client.Delete(ctx, pr)).To(gomega.Succeed())
				pr.ResourceVersion = ""
				h.g.Expect(env.Client.Create(ctx, pr)).To(gomega.Succeed())
			}
			change(pr)
			err := env.Client.Update(ctx, pr)
			h.g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("Value is immutable")))
		})
	}
}
