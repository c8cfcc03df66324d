//go:build e2e

package disruption

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/invariants"
	"github.com/capstan-dev/capstan/test/parity"
)

// pendingBound is how long a pod displaced by a disruption may stay
// Pending: about one launch (1 s here, plus batching and registration),
// generously. A pre-spun replacement takes it at once.
const pendingBound = 10 * time.Second

// voluntary are the disruption reasons a budget limits.
var voluntary = []v1.DisruptionReason{v1.DisruptionReasonEmpty, v1.DisruptionReasonUnderutilized, v1.DisruptionReasonDrifted}

// setup shapes a scenario.
type setup struct {
	replicas int32
	// budget is the nodes of the NodePool's only budget, for reasons
	// (all when none).
	budget  string
	reasons []v1.DisruptionReason
	// instanceTypes the NodePool allows.
	instanceTypes []string
	// annotations of the pods.
	annotations map[string]string
	// minAvailable, when set, adds a PDB.
	minAvailable *int32
	// maxUnavailable, when set, adds a PDB allowing that many of the
	// Deployment's pods to be unavailable (the guard holds the rest).
	maxUnavailable *int32
	// shared lets pods share a node: no anti-affinity, and start waits
	// only for them to run, however many nodes they took.
	shared bool
	// capacityTypes the NodePool allows (any when none).
	capacityTypes []string
	// nodeClass and nodePool edit the scenario's objects before they are
	// created.
	nodeClass func(*simv1alpha1.SimNodeClass)
	nodePool  func(*v1.NodePool)
	// pending, when set, bounds how long the guard lets a pod stay
	// Pending.
	pending time.Duration
	// repairBudget, when set, bounds the NodeClaims repair deletes at
	// once (reason Unhealthy).
	repairBudget *int
}

// scenario is one test's world: a namespace, a NodePool whose nodes only
// its pods tolerate, a Deployment whose pods each need a node of their
// own (required anti-affinity on the hostname) unless they may share
// one, perhaps a PDB, and the guard (the invariant checker) watching
// them.
type scenario struct {
	t      *testing.T
	g      gomega.Gomega
	ns     string
	np     *v1.NodePool
	deploy *appsv1.Deployment
	labels map[string]string
	pdb    *policyv1.PodDisruptionBudget
	guard  *invariants.Checker
	// maxUnavailable is the PDB's, when it has one: scale moves the
	// guard's bound with the replicas.
	maxUnavailable *int32
	// parity is the scenario as simulate input, for checkParity.
	parity *parity.Scenario
}

// start creates the scenario, waits for every replica to run on a node
// of its own (exactly one NodeClaim per replica; with shared, only for
// every replica to run), then starts the guard: the scenario's budget
// for its reasons (every voluntary one when it names none), the slots of
// the reservations its SimNodeClass selects, the cloud's inventory in
// step with the NodeClaims, its PDB (as a rule and as the PDB's status
// says: no scenario's forceful disruption may break it, the spot
// interruption's replacements being up long before its deadline) and
// its Pending bound.
func start(t *testing.T, s setup) *scenario {
	t.Helper()
	ctx := context.Background()
	g := test.NewGomega(t)
	c := cluster.Client
	ns := test.Namespace(t, c)
	snc := test.SimNodeClass()
	if s.nodeClass != nil {
		s.nodeClass(snc)
	}
	np := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = snc.Name
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "scenario", Value: ns, Effect: corev1.TaintEffectNoSchedule}}
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: s.instanceTypes}}
		if len(s.capacityTypes) > 0 {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
				v1.NodeSelectorRequirementWithMinValues{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: s.capacityTypes})
		}
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: s.budget, Reasons: s.reasons}}
		if s.nodePool != nil {
			s.nodePool(np)
		}
	})
	labels := map[string]string{"app": "disrupted"}
	pod := test.Pod(ns, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")}
		p.Spec.Tolerations = []corev1.Toleration{{Key: "scenario", Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
		if !s.shared {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: corev1.LabelHostname,
			}}}}
		}
	})
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "disrupted", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(s.replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: s.annotations}, Spec: pod.Spec}}}
	objs := []client.Object{snc, np, deploy}
	var pdb *policyv1.PodDisruptionBudget
	switch {
	case s.minAvailable != nil:
		pdb = &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "disrupted-pdb", Namespace: ns}, Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(*s.minAvailable)), Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	case s.maxUnavailable != nil:
		pdb = &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "disrupted-pdb", Namespace: ns}, Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(*s.maxUnavailable)), Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	}
	if pdb != nil {
		objs = append(objs, pdb)
	}
	script := parity.ForCluster(t, statePath(), controllerArgs(), np.Name)
	for _, o := range objs {
		g.Expect(c.Create(ctx, o)).To(gomega.Succeed())
		script.Apply(t, o)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, np); _ = c.Delete(ctx, snc) })
	sc := &scenario{t: t, g: g, ns: ns, np: np, deploy: deploy, labels: labels, pdb: pdb, maxUnavailable: s.maxUnavailable, parity: script}
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(sc.running()).To(gomega.HaveLen(int(s.replicas)))
		if !s.shared {
			g.Expect(sc.claims()).To(gomega.HaveLen(int(s.replicas)), "one node per replica")
		}
	}).WithTimeout(90 * time.Second).Should(gomega.Succeed())
	if pdb != nil {
		// The disruption controller counts the healthy pods before it
		// allows or refuses evictions.
		g.Eventually(func(g gomega.Gomega) {
			got := &policyv1.PodDisruptionBudget{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pdb), got)).To(gomega.Succeed())
			g.Expect(got.Status.CurrentHealthy).To(gomega.Equal(s.replicas))
			g.Expect(got.Status.ObservedGeneration).To(gomega.Equal(got.Generation))
		}).Should(gomega.Succeed())
	}
	budget, err := strconv.Atoi(s.budget)
	g.Expect(err).NotTo(gomega.HaveOccurred(), "scenarios' budgets are counts")
	reasons := s.reasons
	if len(reasons) == 0 {
		reasons = voluntary
	}
	budgets := map[v1.DisruptionReason]int{}
	for _, r := range reasons {
		budgets[r] = budget
	}
	if s.repairBudget != nil {
		budgets[v1.DisruptionReasonUnhealthy] = *s.repairBudget
	}
	sc.guard = invariants.New(invariants.Options{Budgets: budgets, Reservations: reservationSlots(t, snc), PendingBound: s.pending,
		SimState: statePath(), GCPeriod: gcPeriod})
	switch {
	case s.minAvailable != nil:
		sc.guard.RequirePDB(ns+"/"+pdb.Name, labels, int(*s.minAvailable))
	case s.maxUnavailable != nil:
		sc.guard.RequirePDB(ns+"/"+pdb.Name, labels, int(s.replicas-*s.maxUnavailable))
	}
	sc.guard.Watch(t, cluster.Config, cluster.Scheme, ns, np.Name)
	return sc
}

// reservationSlots are the slots of the cloud profile's reservations that
// snc selects by id.
func reservationSlots(t *testing.T, snc *simv1alpha1.SimNodeClass) map[string]int {
	t.Helper()
	data, err := os.ReadFile("testdata/cloud-profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	profile := &simv1alpha1.CloudProfile{}
	if err := yaml.UnmarshalStrict(data, profile); err != nil {
		t.Fatalf("reading the cloud profile, %v", err)
	}
	slots := map[string]int{}
	for _, term := range snc.Spec.CapacityReservationSelectorTerms {
		for _, r := range profile.Spec.Reservations {
			if term.ID != "" && r.ID == term.ID {
				slots[r.ID] = r.Count
			}
		}
	}
	return slots
}

// running are the scenario's Running pods that are not terminating.
func (s *scenario) running() []corev1.Pod { return test.RunningPods(cluster.Client, s.ns) }

// claims are the NodePool's NodeClaims.
func (s *scenario) claims() []v1.NodeClaim { return test.NodeClaimsOf(cluster.Client, s.np.Name) }

// names are the NodePool's NodeClaims' and Nodes' names.
func (s *scenario) names() map[string]bool {
	out := map[string]bool{}
	for _, nc := range s.claims() {
		out[nc.Name] = true
		if nc.Status.NodeName != "" {
			out[nc.Status.NodeName] = true
		}
	}
	return out
}

// scale sets the Deployment's replicas. Under a maxUnavailable PDB the
// guard's rule follows them down at once (up, it stays where it was
// until the new pods are Ready: weaker, never wrong).
func (s *scenario) scale(replicas int32) {
	if s.maxUnavailable != nil && replicas < *s.deploy.Spec.Replicas {
		s.guard.SetMinAvailable(s.ns+"/"+s.pdb.Name, int(replicas-*s.maxUnavailable))
	}
	patch := client.MergeFrom(s.deploy.DeepCopy())
	s.deploy.Spec.Replicas = ptr.To(replicas)
	s.g.Expect(cluster.Client.Patch(context.Background(), s.deploy, patch)).To(gomega.Succeed())
	s.parity.Apply(s.t, s.deploy)
}

// requireTypes sets the NodePool's instance-type requirement.
func (s *scenario) requireTypes(types ...string) {
	s.parity.Apply(s.t, test.SetInstanceTypes(s.g, cluster.Client, s.np, types...))
}

// statePath is the simulated cloud's state file.
func statePath() string { return filepath.Join(cluster.Root, "sim-state.json") }

// checkParity runs the scenario so far through `capstan simulate` and
// compares its outcome with the cluster's, but for known differences
// (docs/simulate.md lists them).
func (s *scenario) checkParity(known ...parity.Known) {
	s.t.Helper()
	s.parity.Check(s.t, func() parity.Outcome { return parity.FromChecker(s.guard, len(s.running())) }, known...)
}

// event is the first event with reason whose message contains text about
// one of objects (NodeClaim and Node names); nil if there is none.
func event(objects map[string]bool, reason, text string) *corev1.Event {
	events := &corev1.EventList{}
	if err := cluster.Client.List(context.Background(), events, client.MatchingFields{"reason": reason}); err != nil {
		return nil
	}
	for i, e := range events.Items {
		if objects[e.InvolvedObject.Name] && strings.Contains(e.Message, text) {
			return &events.Items[i]
		}
	}
	return nil
}

// expectEvent waits for an event about the scenario's nodes.
func (s *scenario) expectEvent(objects map[string]bool, reason, text string) {
	s.t.Helper()
	s.g.Eventually(func() *corev1.Event { return event(objects, reason, text) }).WithTimeout(60*time.Second).
		ShouldNot(gomega.BeNil(), func() string {
			return fmt.Sprintf("no %s event saying %q about %v; their events:\n%s", reason, text, objects, strings.Join(eventsAbout(objects), "\n"))
		})
}

// eventsAbout are the events about objects, as "time object reason:
// message", so a missing event's failure shows what was said instead.
func eventsAbout(objects map[string]bool) []string {
	events := &corev1.EventList{}
	if err := cluster.Client.List(context.Background(), events); err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range events.Items {
		if objects[e.InvolvedObject.Name] {
			out = append(out, fmt.Sprintf("%s %s %s: %s", e.CreationTimestamp.Format("15:04:05"), e.InvolvedObject.Name, e.Reason, e.Message))
		}
	}
	slices.Sort(out)
	return out
}

// untouched checks for a while that the scenario's nodes stay: the same
// NodeClaims, none deleting, none added.
func (s *scenario) untouched(want map[string]bool) {
	s.t.Helper()
	s.g.Consistently(func(g gomega.Gomega) {
		claims := s.claims()
		g.Expect(claims).To(gomega.HaveLen(len(want)))
		for _, nc := range claims {
			g.Expect(want).To(gomega.HaveKey(nc.Name))
			g.Expect(nc.DeletionTimestamp).To(gomega.BeNil(), "nodeclaim %s is being deleted", nc.Name)
		}
	}).WithTimeout(quiet).WithPolling(250 * time.Millisecond).Should(gomega.Succeed())
}

func claimNames(claims []v1.NodeClaim) map[string]bool { return test.NodeClaimNames(claims) }

// Scaled to zero, the Deployment's three nodes are removed by Emptiness,
// never more at once than the Empty budget of 1.
func TestEmptyNodesGoWithinTheBudget(t *testing.T) {
	t.Parallel()
	s := start(t, setup{replicas: 3, budget: "1", reasons: []v1.DisruptionReason{v1.DisruptionReasonEmpty}, instanceTypes: []string{"m5.xlarge"}})
	claims := claimNames(s.claims())
	s.scale(0)
	s.g.Eventually(func() []v1.NodeClaim { return s.claims() }).WithTimeout(120 * time.Second).Should(gomega.BeEmpty())
	if got := s.guard.Peak(); got != 1 {
		t.Errorf("at most %d nodeclaims were deleting at once; want 1 (the budget)", got)
	}
	for name := range claims {
		if event(map[string]bool{name: true}, "DisruptionTerminating", "Emptiness") == nil {
			t.Errorf("nodeclaim %s went without a DisruptionTerminating event from Emptiness", name)
		}
	}
	s.checkParity()
}

// A budget of 0 keeps an empty node, and says so.
func TestZeroBudgetKeepsEmptyNodes(t *testing.T) {
	t.Parallel()
	s := start(t, setup{replicas: 1, budget: "0", instanceTypes: []string{"m5.xlarge"}})
	claims := claimNames(s.claims())
	s.scale(0)
	s.g.Eventually(func() []corev1.Pod { return s.running() }).Should(gomega.BeEmpty())
	s.expectEvent(s.names(), "Unconsolidatable", "disruption budget of 0 for Empty")
	s.untouched(claims)
	s.checkParity()
}

// Narrowing the NodePool's instance types drifts its nodes: each is
// replaced by a node of the new type, launched and initialized before the
// old one goes, so no pod waits for a launch, and the PDB holds.
func TestDriftReplacesNodesPreSpun(t *testing.T) {
	t.Parallel()
	const replicas = 3
	s := start(t, setup{replicas: replicas, budget: "1", instanceTypes: []string{"m5.xlarge"}, minAvailable: ptr.To[int32](replicas - 1),
		pending: pendingBound})
	old := claimNames(s.claims())
	s.requireTypes("m5.2xlarge")
	s.g.Eventually(func(g gomega.Gomega) {
		claims := s.claims()
		g.Expect(claims).To(gomega.HaveLen(replicas))
		for _, nc := range claims {
			g.Expect(old).NotTo(gomega.HaveKey(nc.Name), "old nodeclaim %s still there", nc.Name)
			g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.LabelInstanceType, "m5.2xlarge"))
		}
		pods := s.running()
		g.Expect(pods).To(gomega.HaveLen(replicas))
		for _, p := range pods {
			node := &corev1.Node{}
			g.Expect(cluster.Client.Get(context.Background(), client.ObjectKey{Name: p.Spec.NodeName}, node)).To(gomega.Succeed())
			g.Expect(node.Labels).To(gomega.HaveKeyWithValue(v1.LabelInstanceType, "m5.2xlarge"), "pod %s runs on %s", p.Name, node.Name)
		}
	}).WithTimeout(150 * time.Second).Should(gomega.Succeed())
	history := s.guard.History()
	for _, e := range history {
		t.Logf("%s nodeclaim %s %s", e.At.Format("15:04:05.000"), e.Name, e.Kind)
	}
	for name := range old {
		if !slices.ContainsFunc(history, func(e invariants.ClaimEvent) bool { return e.Name == name && e.Kind == invariants.Drifted }) {
			t.Errorf("nodeclaim %s was replaced without being marked Drifted", name)
		}
	}
	for _, v := range invariants.PreSpun(history, old) {
		t.Error(v)
	}
	d, pod := s.guard.LongestPending()
	t.Logf("longest Pending: %s (%s)", d, pod)
	if d > pendingBound {
		t.Errorf("pod %s was Pending for %s; a pre-spun replacement should take it within %s", pod, d, pendingBound)
	}
	if got := s.guard.Peak(); got > 1 {
		t.Errorf("%d nodeclaims were deleting at once", got)
	}
	s.checkParity()
}

// Widening the requirement so the nodes still match is not drift:
// nothing is marked Drifted and nothing is replaced.
func TestWideningIsNotDrift(t *testing.T) {
	t.Parallel()
	s := start(t, setup{replicas: 2, budget: "1", instanceTypes: []string{"m5.xlarge"}})
	claims := claimNames(s.claims())
	s.requireTypes("m5.xlarge", "m5.2xlarge")
	s.untouched(claims)
	for _, nc := range s.claims() {
		if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDrifted); c != nil {
			t.Errorf("nodeclaim %s has %s=%s (%s) after a widening", nc.Name, c.Type, c.Status, c.Message)
		}
	}
	for _, e := range s.guard.History() {
		if e.Kind == invariants.Drifted {
			t.Errorf("nodeclaim %s was marked Drifted after a widening", e.Name)
		}
	}
	s.checkParity()
}

// A do-not-disrupt pod keeps its drifted node, and the verdict names it.
func TestDoNotDisruptPodKeepsDriftedNode(t *testing.T) {
	t.Parallel()
	s := start(t, setup{replicas: 1, budget: "1", instanceTypes: []string{"m5.xlarge"},
		annotations: map[string]string{v1.DoNotDisruptAnnotationKey: "true"}})
	claims := claimNames(s.claims())
	pod := s.running()[0]
	s.requireTypes("m5.2xlarge")
	s.g.Eventually(func(g gomega.Gomega) {
		for _, nc := range s.claims() {
			g.Expect(meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeDrifted)).To(gomega.BeTrue(), "nodeclaim %s not Drifted", nc.Name)
		}
	}).Should(gomega.Succeed())
	s.expectEvent(s.names(), "DisruptionBlocked", "pod "+s.ns+"/"+pod.Name+" has do-not-disrupt")
	s.untouched(claims)
	s.checkParity()
}

// A PDB allowing no eviction keeps the drifted nodes of its pods, and the
// verdict names it.
func TestPDBKeepsDriftedNodes(t *testing.T) {
	t.Parallel()
	const replicas = 2
	s := start(t, setup{replicas: replicas, budget: "1", instanceTypes: []string{"m5.xlarge"}, minAvailable: ptr.To[int32](replicas)})
	claims := claimNames(s.claims())
	s.requireTypes("m5.2xlarge")
	s.g.Eventually(func(g gomega.Gomega) {
		for _, nc := range s.claims() {
			g.Expect(meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeDrifted)).To(gomega.BeTrue(), "nodeclaim %s not Drifted", nc.Name)
		}
	}).Should(gomega.Succeed())
	s.expectEvent(s.names(), "DisruptionBlocked", "pdb "+s.ns+"/"+s.pdb.Name+" prevents pod evictions")
	s.untouched(claims)
	s.checkParity()
}

// holdFor is the do-not-disrupt duration of
// TestDoNotDisruptDurationHoldsDriftedNode: 30s rather than the issue's
// 2m, to keep the e2e budget; the unit tests cover long durations with a
// fake clock.
const holdFor = 30 * time.Second

// A pod with do-not-disrupt for a duration holds its drifted node from
// its start until the duration ends (the verdict says until when), then
// drift replaces the node (docs/disruption.md, "do-not-disrupt with a
// duration").
func TestDoNotDisruptDurationHoldsDriftedNode(t *testing.T) {
	t.Parallel()
	s := start(t, setup{replicas: 1, budget: "1", instanceTypes: []string{"m5.xlarge"},
		annotations: map[string]string{v1.DoNotDisruptAnnotationKey: holdFor.String()}})
	old := claimNames(s.claims())
	pod := s.running()[0]
	s.g.Expect(pod.Status.StartTime).NotTo(gomega.BeNil())
	until := pod.Status.StartTime.Add(holdFor)
	s.requireTypes("m5.2xlarge")
	s.expectEvent(s.names(), "DisruptionBlocked", "pod "+s.ns+"/"+pod.Name+" has do-not-disrupt until "+until.UTC().Format(time.RFC3339))
	s.g.Eventually(func(g gomega.Gomega) {
		claims := s.claims()
		g.Expect(claims).To(gomega.HaveLen(1))
		g.Expect(old).NotTo(gomega.HaveKey(claims[0].Name), "old nodeclaim %s still there", claims[0].Name)
		g.Expect(claims[0].Labels).To(gomega.HaveKeyWithValue(v1.LabelInstanceType, "m5.2xlarge"))
		g.Expect(s.running()).To(gomega.HaveLen(1))
	}).WithTimeout(holdFor + 90*time.Second).Should(gomega.Succeed())
	for _, e := range s.guard.History() {
		t.Logf("%s nodeclaim %s %s", e.At.Format("15:04:05.000"), e.Name, e.Kind)
		if (e.Kind == invariants.Created && !old[e.Name]) || (e.Kind == invariants.Deleting && old[e.Name]) {
			if e.At.Before(until) {
				t.Errorf("nodeclaim %s %s at %s, before the pod's do-not-disrupt ended at %s", e.Name, e.Kind, e.At.Format(time.RFC3339Nano), until.Format(time.RFC3339))
			}
		}
	}
}
