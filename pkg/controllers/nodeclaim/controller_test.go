package nodeclaim

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim/simapi"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/controllers/index"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/test"
)

// replans records the immediate solves the lifecycle asked for: its
// NodeClaim's pods handed back to the provisioner.
type replans struct {
	mu        sync.Mutex
	immediate int
}

func (r *replans) trigger(t effects.TriggerSolve) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.Immediate {
		r.immediate++
	}
}

func (r *replans) any() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.immediate > 0
}

type fixture struct {
	clock       *clocktesting.FakeClock
	cloud       *sim.Cloud
	unavailable *cloudprovider.UnavailableOfferings
	replans     *replans
	class       *simv1alpha1.SimNodeClass
}

// start runs the lifecycle controller on the simulated cloud with the
// launch faults, under a fake clock, with a launch timeout of 5 minutes.
func start(t *testing.T, faults ...simv1alpha1.LaunchFault) *fixture {
	t.Helper()
	return startWith(t, setup{faults: faults})
}

// setup is what a fixture's controller runs with beyond the defaults.
type setup struct {
	faults []simv1alpha1.LaunchFault
	// cloud, when set, stands between the controller and the simulated
	// cloud.
	cloud func(*sim.Cloud) cloudprovider.CloudProvider
	// workers is Options.MaxConcurrentReconciles.
	workers int
}

func startWith(t *testing.T, s setup) *fixture {
	t.Helper()
	ctx := context.Background()
	g := test.NewGomega(t)
	f := &fixture{clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), replans: &replans{}, class: test.SimNodeClass()}
	g.Expect(env.Client.Create(ctx, f.class)).To(gomega.Succeed())
	profile, err := sim.DefaultProfile()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	profile.Spec.LaunchFaults = s.faults
	types, err := catalog.Load()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	f.unavailable = cloudprovider.NewUnavailableOfferings(f.clock, 0)
	f.cloud, err = sim.New(sim.Options{Profile: profile, Catalog: types, Clock: f.clock, NodeClasses: simapi.NodeClasses{Client: env.Client}, Unavailable: f.unavailable})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	test.StartManager(t, env, func(mgr manager.Manager) error {
		if err := index.Register(ctx, mgr); err != nil {
			return err
		}
		var cp cloudprovider.CloudProvider = f.cloud
		if s.cloud != nil {
			cp = s.cloud(f.cloud)
		}
		applier := apply.New(apply.Deps{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("test"), Cloud: cp, Unavailable: f.unavailable,
			Trigger: f.replans.trigger, Clock: f.clock})
		return New(Deps{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Applier: applier, Clock: f.clock},
			Options{Timeouts: lifecycle.Timeouts{Launch: 5 * time.Minute, Registration: 15 * time.Minute}, MaxConcurrentReconciles: s.workers}).Register(ctx, mgr)
	})
	return f
}

// claim is a NodeClaim for one on-demand m5.large of the fixture's class.
func (f *fixture) claim(t *testing.T) *v1.NodeClaim {
	t.Helper()
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Spec.NodeClassRef.Name = f.class.Name
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
		nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}},
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}},
		}
	})
	test.NewGomega(t).Expect(env.Client.Create(context.Background(), nc)).To(gomega.Succeed())
	return nc
}

func launched(g gomega.Gomega, nc *v1.NodeClaim) *metav1.Condition {
	got := &v1.NodeClaim{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(nc), got)).To(gomega.Succeed())
	c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeLaunched)
	g.Expect(c).NotTo(gomega.BeNil())
	return c
}

func eventsOf(g gomega.Gomega, nc *v1.NodeClaim, reason string) []corev1.Event {
	list := &corev1.EventList{}
	g.Expect(env.Client.List(context.Background(), list)).To(gomega.Succeed())
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Name == nc.Name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// A launch refused for a configuration reason sets Launched=False with
// the code as its reason and an event naming it, waits out the backoff,
// and launches once the cause is gone.
func TestRefusedLaunchIsRetriedWithBackoff(t *testing.T) {
	g := test.NewGomega(t)
	f := start(t, simv1alpha1.LaunchFault{Code: "InvalidParameterValue", Message: "Invalid IAM Instance Profile name", Count: ptr.To(1)})
	nc := f.claim(t)
	g.Eventually(func(g gomega.Gomega) {
		c := launched(g, nc)
		g.Expect(c.Status).To(gomega.Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(gomega.Equal("InvalidParameterValue"))
		g.Expect(c.Message).To(gomega.ContainSubstring("Invalid IAM Instance Profile name"))
		events := eventsOf(g, nc, "LaunchFailed")
		g.Expect(events).NotTo(gomega.BeEmpty())
		g.Expect(events[0].Message).To(gomega.ContainSubstring("InvalidParameterValue"))
	}).Should(gomega.Succeed())
	// The backoff holds the retry while the clock stands still (the
	// status update's own reconcile included).
	g.Consistently(func(g gomega.Gomega) {
		g.Expect(launched(g, nc).Status).To(gomega.Equal(metav1.ConditionFalse))
	}).WithTimeout(2 * time.Second).Should(gomega.Succeed())
	f.clock.Step(lifecycle.LaunchRetryBase)
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(launched(g, nc).Status).To(gomega.Equal(metav1.ConditionTrue))
	}).Should(gomega.Succeed())
	if f.replans.any() {
		t.Errorf("a refused launch re-planned %s's pods; it should be retried", nc.Name)
	}
}

// A NodeClaim still refused at the launch timeout is deleted and its pods
// handed back to the provisioner.
func TestLaunchTimeoutDeletes(t *testing.T) {
	g := test.NewGomega(t)
	f := start(t, simv1alpha1.LaunchFault{Code: "UnauthorizedOperation"})
	nc := f.claim(t)
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(launched(g, nc).Reason).To(gomega.Equal("UnauthorizedOperation"))
	}).Should(gomega.Succeed())
	f.clock.Step(4 * time.Minute)
	g.Consistently(func(g gomega.Gomega) {
		got := &v1.NodeClaim{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(nc), got)).To(gomega.Succeed())
		g.Expect(got.DeletionTimestamp).To(gomega.BeNil())
	}).WithTimeout(2 * time.Second).Should(gomega.Succeed())
	f.clock.Step(time.Minute + time.Second)
	g.Eventually(func(g gomega.Gomega) {
		got := &v1.NodeClaim{}
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(nc), got)
		g.Expect(errors.IsNotFound(err) || err == nil && got.DeletionTimestamp != nil).To(gomega.BeTrue())
		g.Expect(eventsOf(g, nc, "LaunchTimeout")).NotTo(gomega.BeEmpty())
		g.Expect(f.replans.any()).To(gomega.BeTrue())
	}).Should(gomega.Succeed())
	if n := len(f.cloud.Snapshot().Instances); n != 0 {
		t.Errorf("%d instances launched", n)
	}
}

// A spot launch refused for the service-linked role marks spot
// account-wide and re-plans at once, with an event saying why.
func TestSpotServiceLinkedRoleReplans(t *testing.T) {
	g := test.NewGomega(t)
	f := start(t, simv1alpha1.LaunchFault{Code: "AuthFailure.ServiceLinkedRoleCreationNotPermitted", CapacityType: v1.CapacityTypeSpot})
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Spec.NodeClassRef.Name = f.class.Name
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
		nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}},
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}},
		}
	})
	g.Expect(env.Client.Create(context.Background(), nc)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(f.replans.any()).To(gomega.BeTrue())
		g.Expect(eventsOf(g, nc, "SpotServiceLinkedRoleCreationFailed")).NotTo(gomega.BeEmpty())
	}).Should(gomega.Succeed())
	reason, ok := f.unavailable.Reason(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "c5.large", Zone: "us-west-2c"})
	if !ok || !strings.Contains(reason, "ServiceLinkedRole") {
		t.Errorf("spot elsewhere: unavailable %t (%q), want marked for the service-linked role", ok, reason)
	}
}
