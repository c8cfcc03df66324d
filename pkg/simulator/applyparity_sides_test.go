package simulator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim/simapi"
	apiapply "github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/drain"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// startParity creates the case's objects and returns them as stored.
func startParity(t *testing.T, c client.Client, tc parityCase) ([]*v1.NodeClaim, []*corev1.Node) {
	t.Helper()
	ctx := context.Background()
	var claims []*v1.NodeClaim
	for _, want := range tc.claims {
		nc := want.DeepCopy()
		if err := c.Create(ctx, nc); err != nil {
			t.Fatal(err)
		}
		nc.Status = want.Status
		if err := c.Status().Update(ctx, nc); err != nil {
			t.Fatal(err)
		}
		claims = append(claims, nc)
	}
	var nodes []*corev1.Node
	for _, want := range tc.nodes {
		n := want.DeepCopy()
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		n.Status = want.Status
		if err := c.Status().Update(ctx, n); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	for _, np := range tc.pools {
		if err := c.Create(ctx, np.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range slices.Concat(namespacesOf(tc.pods), namespacesOf(tc.requests)) {
		ns := &corev1.Namespace{}
		ns.Name = o
		if err := client.IgnoreAlreadyExists(c.Create(ctx, ns)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range tc.requests {
		pr := want.DeepCopy()
		if err := c.Create(ctx, pr); err != nil {
			t.Fatal(err)
		}
		pr.Status = want.Status
		if err := c.Status().Update(ctx, pr); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range tc.pods {
		if err := c.Create(ctx, p.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	return claims, nodes
}

func parityCloud(t *testing.T, faults []simv1alpha1.LaunchFault, nodeClasses sim.NodeClasses, clk *clocktesting.FakeClock, unavailable *cloudprovider.UnavailableOfferings) *sim.Cloud {
	t.Helper()
	profile, err := sim.DefaultProfile()
	if err != nil {
		t.Fatal(err)
	}
	profile.Spec.LaunchFaults = faults
	types, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	cloud, err := sim.New(sim.Options{Profile: profile, Catalog: types, Clock: clk, NodeClasses: nodeClasses, Unavailable: unavailable})
	if err != nil {
		t.Fatal(err)
	}
	return cloud
}

// apiSide is the API server applier's cloud and what it records.
type apiSide struct {
	cloud       *sim.Cloud
	clock       *clocktesting.FakeClock
	unavailable *cloudprovider.UnavailableOfferings
	triggers    []effects.TriggerSolve
}

func newAPISide(t *testing.T, c client.Client, tc parityCase) *apiSide {
	t.Helper()
	clk := clocktesting.NewFakeClock(parityStart)
	unavailable := cloudprovider.NewUnavailableOfferings(clk, 0)
	return &apiSide{cloud: parityCloud(t, tc.faults, simapi.NodeClasses{Client: c}, clk, unavailable), clock: clk, unavailable: unavailable}
}

// launchParity launches nc's instance in cloud and returns its provider id.
func launchParity(t *testing.T, cloud *sim.Cloud, nc *v1.NodeClaim) string {
	t.Helper()
	created, err := cloud.Create(context.Background(), nc.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	return created.Status.ProviderID
}

func applyToAPI(t *testing.T, c client.Client, side *apiSide, tc parityCase, claims []*v1.NodeClaim, nodes []*corev1.Node, effs []effects.Effect) outcome {
	t.Helper()
	ctx := context.Background()
	unavailable := side.unavailable
	recorder := events.NewFakeRecorder(100)
	attempts := lifecycle.NewAttempts()
	// Every NodeClaim there was before, so that one the effects create is
	// compared too (the test's API server is shared by the cases).
	before := &v1.NodeClaimList{}
	if err := c.List(ctx, before); err != nil {
		t.Fatal(err)
	}
	existed := map[string]bool{}
	for _, nc := range before.Items {
		existed[nc.Name] = true
	}
	for _, nc := range claims {
		existed[nc.Name] = false
	}
	a := apiapply.New(apiapply.Deps{Client: c, Recorder: recorder, Cloud: side.cloud,
		Unavailable: unavailable, Counters: parityCounters(), Trigger: func(e effects.TriggerSolve) { side.triggers = append(side.triggers, e) },
		Attempts: attempts, Clock: side.clock})
	requeue, err := a.Apply(ctx, effs)
	if err != nil {
		t.Fatal(err)
	}
	out := outcome{Claims: map[string]claimOutcome{}, Nodes: map[string]nodeOutcome{}, Attempts: map[string]lifecycle.LaunchAttempts{}, Marked: marked(unavailable)}
	if requeue > 0 {
		out.Requeue = parityStart.Add(requeue)
	}
	after := &v1.NodeClaimList{}
	if err := c.List(ctx, after); err != nil {
		t.Fatal(err)
	}
	for i := range after.Items {
		if nc := &after.Items[i]; !existed[nc.Name] {
			out.Claims[nc.Name] = claimOutcomeOf(nc)
		}
	}
	for _, nc := range claims {
		if a := attempts.Get(nc.Name); a.Failures > 0 {
			out.Attempts[nc.Name] = a
		}
	}
	for _, n := range nodes {
		got := &corev1.Node{}
		err := c.Get(ctx, client.ObjectKeyFromObject(n), got)
		if err == nil {
			out.Nodes[n.Name] = nodeOutcomeOf(got)
		}
		// The provisioner watches Nodes and asks for a batched solve when
		// one is deleting (provisioner.Register): a node that began
		// deleting, whether or not it is gone yet.
		if n.DeletionTimestamp == nil && (err != nil || got.DeletionTimestamp != nil) {
			side.triggers = append(side.triggers, effects.TriggerSolve{})
		}
	}
	for _, e := range side.triggers {
		out.Trigger = max(out.Trigger, triggerOf(e.Immediate))
	}
	out.Instances = instances(t, side.cloud)
	out.Pools = map[string]poolOutcome{}
	for _, np := range tc.pools {
		got := &v1.NodePool{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(np), got); err != nil {
			t.Fatal(err)
		}
		out.Pools[np.Name] = poolOutcomeOf(got)
	}
	out.Requests = map[string][]string{}
	for _, pr := range tc.requests {
		got := &autoscalingv1.ProvisioningRequest{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pr), got); err != nil {
			t.Fatal(err)
		}
		out.Requests[pr.Name] = requestOutcomeOf(got)
	}
	for _, p := range tc.pods {
		got := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), got); err == nil && got.DeletionTimestamp == nil {
			out.Pods = append(out.Pods, podKey(got))
		}
	}
	close(recorder.Events)
	for e := range recorder.Events {
		// The fake recorder writes "Type Reason Message".
		_, rest, _ := strings.Cut(e, " ")
		reason, message, _ := strings.Cut(rest, " ")
		out.Events = append(out.Events, reason+": "+message)
	}
	return out
}

// parityWorld is a simulator on the case's cloud, with nothing in it yet.
func parityWorld(t *testing.T, class *simv1alpha1.SimNodeClass, tc parityCase) *Simulator {
	t.Helper()
	profile, err := sim.DefaultProfile()
	if err != nil {
		t.Fatal(err)
	}
	profile.Spec.LaunchFaults = tc.faults
	types, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(&manifests.Set{SimNodeClasses: []simv1alpha1.SimNodeClass{*class}}, profile, types, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func applyToWorld(t *testing.T, s *Simulator, tc parityCase, claims []*v1.NodeClaim, nodes []*corev1.Node, effs []effects.Effect) outcome {
	t.Helper()
	for _, nc := range claims {
		s.world.claims[nc.Name] = nc.DeepCopy()
	}
	for _, n := range nodes {
		s.world.setNode(n.DeepCopy())
	}
	for _, p := range tc.pods {
		s.world.addPod(p.DeepCopy())
	}
	for _, np := range tc.pools {
		s.world.nodePools = append(s.world.nodePools, *np.DeepCopy())
	}
	for _, pr := range tc.requests {
		s.world.provreqs = append(s.world.provreqs, *pr.DeepCopy())
	}
	if err := s.applyEffects(context.Background(), effs); err != nil && !errors.As(err, new(*effects.RefusedEvictions)) {
		t.Fatal(err)
	}
	out := outcome{Claims: map[string]claimOutcome{}, Nodes: map[string]nodeOutcome{}, Attempts: map[string]lifecycle.LaunchAttempts{}, Marked: marked(s.unavailable)}
	for _, at := range s.requeues {
		if out.Requeue.IsZero() || at.Before(out.Requeue) {
			out.Requeue = at
		}
	}
	for name, nc := range s.world.claims {
		out.Claims[name] = claimOutcomeOf(nc)
	}
	for _, nc := range claims {
		if a := s.attempts.Get(nc.Name); a.Failures > 0 {
			out.Attempts[nc.Name] = a
		}
	}
	for _, n := range nodes {
		if got := s.world.nodes[n.Name]; got != nil {
			out.Nodes[n.Name] = nodeOutcomeOf(got)
		}
	}
	// The batch keeps whether a solve was asked for and whether at once:
	// an immediate one is due now, a batched one only after its window.
	if s.batch != (scaleup.Batch{}) {
		due, _ := s.batch.Due(scaleup.Window{Idle: time.Second, Max: time.Minute}, s.clock.Now())
		out.Trigger = triggerOf(due)
	}
	out.Instances = instances(t, s.cloud)
	out.Pools = map[string]poolOutcome{}
	for _, np := range tc.pools {
		out.Pools[np.Name] = poolOutcomeOf(s.world.nodePool(np.Name))
	}
	out.Requests = map[string][]string{}
	for i := range s.world.provreqs {
		out.Requests[s.world.provreqs[i].Name] = requestOutcomeOf(&s.world.provreqs[i])
	}
	for _, p := range s.world.sortedPods() {
		out.Pods = append(out.Pods, podKey(p))
	}
	for _, e := range s.rec.events {
		out.Events = append(out.Events, e.Kind+": "+e.Message)
	}
	return out
}

// namespacesOf are the namespaces of the first of objs, if any: a case's
// objects of a kind share one.
func namespacesOf[T client.Object](objs []T) []string {
	if len(objs) == 0 {
		return nil
	}
	return []string{objs[0].GetNamespace()}
}

// requestOutcomeOf are a ProvisioningRequest's conditions, as compared.
func requestOutcomeOf(pr *autoscalingv1.ProvisioningRequest) []string {
	var out []string
	for _, c := range pr.Status.Conditions {
		out = append(out, strings.Join([]string{c.Type, string(c.Status), c.Reason, c.Message, c.LastTransitionTime.UTC().String()}, " "))
	}
	slices.Sort(out)
	return out
}

// triggerOf names a solve asked for; "immediate" sorts after "batched".
func triggerOf(immediate bool) string {
	if immediate {
		return "immediate"
	}
	return "batched"
}

// instances are the provider ids cloud runs.
func instances(t *testing.T, cloud *sim.Cloud) []string {
	t.Helper()
	running, err := cloud.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, inst := range running {
		out = append(out, inst.Status.ProviderID)
	}
	return out
}

// parityCounters are the metrics the cases' effects name.
func parityCounters() *apiapply.Counters {
	c := apiapply.NewCounters()
	c.Add(disruption.MetricDisrupted, prometheus.NewCounterVec(prometheus.CounterOpts{Name: disruption.MetricDisrupted}, []string{"reason"}))
	c.Add(scaleup.MetricNodeClaimsCreated, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "created"}, []string{"nodepool", "capacity_type"}))
	c.AddHistogram(drain.SlackMetric, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "slack"}))
	return c
}

func claimOutcomeOf(nc *v1.NodeClaim) claimOutcome {
	out := claimOutcome{Labels: nc.Labels, Annotations: nc.Annotations, Finalizers: nc.Finalizers, Launched: nc.Status.ProviderID != "",
		ImageID: nc.Status.ImageID, NodeName: nc.Status.NodeName, Capacity: nc.Status.Capacity, LastPodEventTime: nc.Status.LastPodEventTime.UTC(),
		Deleting: nc.DeletionTimestamp != nil}
	for _, c := range nc.Status.Conditions {
		out.Conditions = append(out.Conditions, strings.Join([]string{c.Type, string(c.Status), c.Reason, c.Message, c.LastTransitionTime.UTC().String()}, " "))
	}
	slices.Sort(out.Conditions)
	return out
}

func poolOutcomeOf(np *v1.NodePool) poolOutcome {
	out := poolOutcome{Annotations: np.Annotations, Resources: np.Status.Resources}
	for _, c := range np.Status.Conditions {
		out.Conditions = append(out.Conditions, strings.Join([]string{c.Type, string(c.Status), c.Reason, c.Message, c.LastTransitionTime.UTC().String()}, " "))
	}
	return out
}

func nodeOutcomeOf(n *corev1.Node) nodeOutcome {
	return nodeOutcome{Labels: n.Labels, Taints: n.Spec.Taints, Finalizers: n.Finalizers, Deleting: n.DeletionTimestamp != nil}
}

// marked are the offerings of m5.large marked unavailable.
func marked(u *cloudprovider.UnavailableOfferings) []cloudprovider.OfferingKey {
	var out []cloudprovider.OfferingKey
	for _, z := range []string{"us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"} {
		for _, ct := range []string{v1.CapacityTypeOnDemand, v1.CapacityTypeSpot} {
			key := cloudprovider.OfferingKey{CapacityType: ct, InstanceType: "m5.large", Zone: z}
			if _, ok := u.Reason(key); ok {
				out = append(out, key)
			}
		}
	}
	return out
}
