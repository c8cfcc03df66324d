//go:build e2e

package faults

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/invariants"
	"github.com/capstan-dev/capstan/test/parity"
)

// voluntary are the disruption reasons a budget limits.
var voluntary = []v1.DisruptionReason{v1.DisruptionReasonEmpty, v1.DisruptionReasonUnderutilized, v1.DisruptionReasonDrifted}

// workload is one Deployment of a scenario, perhaps pinned to an instance
// type.
type workload struct {
	name         string
	replicas     int32
	instanceType string
}

// setup shapes a scenario.
type setup struct {
	workloads []workload
	// budget is the nodes of the NodePool's only budget, for every
	// voluntary reason.
	budget int
	// instanceTypes and capacityTypes the NodePool allows (any capacity
	// type when none).
	instanceTypes []string
	capacityTypes []string
	// minAvailable or maxUnavailable, when set, add a PDB over every pod
	// of the scenario.
	minAvailable, maxUnavailable *int32
	// consolidate leaves consolidation on (Never otherwise, so only the
	// fault's disruptions happen).
	consolidate bool
}

// scenario is one test's world: a namespace, a NodePool whose nodes only
// its pods tolerate, Deployments whose pods each need a node of their
// own (required anti-affinity on the hostname across all of them), perhaps
// a PDB, and the guard (the invariant checker) watching them.
type scenario struct {
	t      *testing.T
	g      gomega.Gomega
	ns     string
	np     *v1.NodePool
	pdb    *policyv1.PodDisruptionBudget
	deploy map[string]*appsv1.Deployment
	guard  *invariants.Checker
	// pods are the scenario's pods when it started, by name.
	pods map[string]bool
	// initial are its NodeClaims when it started.
	initial map[string]bool
	// parity is the scenario as simulate input, for checkParity.
	parity *parity.Scenario
}

// appLabel is the label of every pod of a scenario: the anti-affinity's
// and the PDB's selector.
var appLabel = map[string]string{"app": "faults"}

func start(t *testing.T, s setup) *scenario {
	t.Helper()
	ctx := context.Background()
	g := test.NewGomega(t)
	c := cluster.Client
	ns := test.Namespace(t, c)
	snc := test.SimNodeClass()
	np := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = snc.Name
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "scenario", Value: ns, Effect: corev1.TaintEffectNoSchedule}}
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: s.instanceTypes}}
		if len(s.capacityTypes) > 0 {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
				v1.NodeSelectorRequirementWithMinValues{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: s.capacityTypes})
		}
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: strconv.Itoa(s.budget)}}
		if !s.consolidate {
			np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never)
		}
	})
	objs := []client.Object{snc, np}
	sc := &scenario{t: t, g: g, ns: ns, np: np, deploy: map[string]*appsv1.Deployment{}}
	var replicas int32
	for _, w := range s.workloads {
		replicas += w.replicas
		labels := map[string]string{"app": "faults", "workload": w.name}
		pod := test.Pod(ns, func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")}
			p.Spec.Tolerations = []corev1.Toleration{{Key: "scenario", Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
			p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: appLabel}, TopologyKey: corev1.LabelHostname,
			}}}}
			if w.instanceType != "" {
				p.Spec.NodeSelector = map[string]string{v1.LabelInstanceType: w.instanceType}
			}
		})
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: ns}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(w.replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec}}}
		sc.deploy[w.name] = d
		objs = append(objs, d)
	}
	switch {
	case s.minAvailable != nil:
		sc.pdb = &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "faults", Namespace: ns}, Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(*s.minAvailable)), Selector: &metav1.LabelSelector{MatchLabels: appLabel}}}
	case s.maxUnavailable != nil:
		sc.pdb = &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "faults", Namespace: ns}, Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(*s.maxUnavailable)), Selector: &metav1.LabelSelector{MatchLabels: appLabel}}}
	}
	if sc.pdb != nil {
		objs = append(objs, sc.pdb)
	}
	sc.parity = parity.ForCluster(t, statePath(), controllerArgs(), np.Name)
	for _, o := range objs {
		g.Expect(c.Create(ctx, o)).To(gomega.Succeed())
		sc.parity.Apply(t, o)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, np); _ = c.Delete(ctx, snc) })
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(sc.running()).To(gomega.HaveLen(int(replicas)))
		g.Expect(sc.claims()).To(gomega.HaveLen(int(replicas)), "one node per replica")
	}).WithTimeout(2 * time.Minute).Should(gomega.Succeed())
	if sc.pdb != nil {
		g.Eventually(func(g gomega.Gomega) {
			got := &policyv1.PodDisruptionBudget{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(sc.pdb), got)).To(gomega.Succeed())
			g.Expect(got.Status.CurrentHealthy).To(gomega.Equal(replicas))
			g.Expect(got.Status.ObservedGeneration).To(gomega.Equal(got.Generation))
		}).Should(gomega.Succeed())
	}
	budgets := map[v1.DisruptionReason]int{}
	for _, r := range voluntary {
		budgets[r] = s.budget
	}
	sc.guard = invariants.New(invariants.Options{Budgets: budgets, SimState: statePath(), GCPeriod: gcPeriod})
	switch {
	case s.minAvailable != nil:
		sc.guard.RequirePDB(ns+"/"+sc.pdb.Name, appLabel, int(*s.minAvailable))
	case s.maxUnavailable != nil:
		sc.guard.RequirePDB(ns+"/"+sc.pdb.Name, appLabel, int(replicas-*s.maxUnavailable))
	}
	sc.guard.Watch(t, cluster.Config, cluster.Scheme, ns, np.Name)
	sc.pods = map[string]bool{}
	for _, p := range sc.running() {
		sc.pods[p.Name] = true
	}
	sc.initial = claimNames(sc.claims())
	return sc
}

func statePath() string { return filepath.Join(cluster.Root, "sim-state.json") }

// running are the scenario's Running pods that are not terminating.
func (s *scenario) running() []corev1.Pod { return test.RunningPods(cluster.Client, s.ns) }

// claims are the NodePool's NodeClaims.
func (s *scenario) claims() []v1.NodeClaim { return test.NodeClaimsOf(cluster.Client, s.np.Name) }

func claimNames(claims []v1.NodeClaim) map[string]bool { return test.NodeClaimNames(claims) }

// node is a NodeClaim's Node, nil if it has none (yet, or any more).
func node(nc *v1.NodeClaim) *corev1.Node {
	if nc.Status.NodeName == "" {
		return nil
	}
	n := &corev1.Node{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKey{Name: nc.Status.NodeName}, n); err != nil {
		return nil
	}
	return n
}

func disrupted(n *corev1.Node) bool {
	return n != nil && slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == v1.DisruptedTaintKey })
}

// requireTypes sets the NodePool's instance-type requirement.
func (s *scenario) requireTypes(types ...string) {
	s.parity.Apply(s.t, test.SetInstanceTypes(s.g, cluster.Client, s.np, types...))
}

// checkParity runs the scenario so far through `capstan simulate` and
// compares its outcome with the cluster's, but for known differences
// (docs/simulate.md lists them).
func (s *scenario) checkParity(known ...parity.Known) {
	s.t.Helper()
	s.parity.Check(s.t, func() parity.Outcome { return parity.FromChecker(s.guard, len(s.running())) }, known...)
}

// leakFree waits (up to garbage collection's period and then some) until
// the cloud's running instances of the NodePool and its NodeClaims match
// one for one: every running instance has a NodeClaim, every NodeClaim
// that launched has a running instance.
func (s *scenario) leakFree() {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		state, err := sim.LoadState(statePath())
		g.Expect(err).NotTo(gomega.HaveOccurred())
		claims := s.claims()
		byProvider := map[string]string{}
		for _, nc := range claims {
			if nc.Status.ProviderID != "" {
				byProvider[nc.Status.ProviderID] = nc.Name
			}
		}
		running := map[string]bool{}
		for _, inst := range state.Instances {
			if !strings.HasPrefix(inst.NodeClaim, s.np.Name+"-") || inst.State != sim.InstanceRunning {
				continue
			}
			running[inst.ProviderID()] = true
			g.Expect(byProvider).To(gomega.HaveKey(inst.ProviderID()), "instance %s (nodeclaim %s) runs without a NodeClaim", inst.ID, inst.NodeClaim)
		}
		for id, name := range byProvider {
			g.Expect(running).To(gomega.HaveKey(id), "nodeclaim %s has no running instance", name)
		}
	}).WithTimeout(gcPeriod + 30*time.Second).Should(gomega.Succeed())
}

// settled waits until the scenario is quiet again: want pods running, as
// many NodeClaims (one per pod: no replacement left over), none deleting,
// no node tainted as disrupted.
func (s *scenario) settled(want int, timeout time.Duration) {
	s.t.Helper()
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(len(s.running())).To(gomega.Equal(want), "running pods")
		claims := s.claims()
		g.Expect(claims).To(gomega.HaveLen(want))
		for i := range claims {
			g.Expect(claims[i].DeletionTimestamp).To(gomega.BeNil(), "nodeclaim %s deleting", claims[i].Name)
			g.Expect(disrupted(node(&claims[i]))).To(gomega.BeFalse(), "nodeclaim %s's node tainted disrupted", claims[i].Name)
		}
	}).WithTimeout(timeout).Should(gomega.Succeed(), s.dump)
}

// dump describes the scenario's NodeClaims, their nodes' taints and its
// pods, for a failure.
func (s *scenario) dump() string {
	var out []string
	for _, nc := range s.claims() {
		line := describe([]v1.NodeClaim{nc})
		if n := node(&nc); n != nil {
			line += fmt.Sprintf(" node %s taints %v unschedulable=%t", n.Name, n.Spec.Taints, n.Spec.Unschedulable)
		}
		out = append(out, line)
	}
	pods := &corev1.PodList{}
	_ = cluster.Client.List(context.Background(), pods, client.InNamespace(s.ns))
	for _, p := range pods.Items {
		line := fmt.Sprintf("pod %s %s node=%q nominated=%q", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.NominatedNodeName)
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				line += fmt.Sprintf(" %s=%s %s", c.Type, c.Reason, c.Message)
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// summary logs what the scenario went through, in the form
// docs/reliability.md quotes: NodeClaims created and deleted after it
// started, its pods moved (the starting pods gone) and the guard's
// violations.
func (s *scenario) summary(extra string) {
	created, deleted := 0, 0
	for _, e := range s.guard.History() {
		switch {
		case e.Kind == invariants.Created && !s.initial[e.Name]:
			created++
		case e.Kind == invariants.Deleting:
			deleted++
		}
	}
	still := 0
	for _, p := range s.running() {
		if s.pods[p.Name] {
			still++
		}
	}
	s.t.Logf("SUMMARY %s: nodeclaims created %d, deleted %d; pods moved %d of %d; violations %d%s",
		s.t.Name(), created, deleted, len(s.pods)-still, len(s.pods), len(s.guard.Violations()), extra)
}

// storm is one of the profile's scripted events.
type storm struct {
	at time.Time
	// index is its place among the profile's events, which the cloud
	// applies in order and counts in its state file.
	index int
}

// storms are the profile's events of typ on instanceType, with when they
// come (their offsets from the cloud's first start, which the state file
// keeps).
func storms(g gomega.Gomega, typ simv1alpha1.CloudEventType, instanceType string) []storm {
	profile, err := sim.LoadProfile("testdata/cloud-profile.yaml")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	start := cloudState(g).Start
	var out []storm
	for i, e := range profile.Spec.Events {
		if e.Type == typ && e.InstanceType == instanceType {
			out = append(out, storm{at: start.Add(e.At.Duration), index: i})
		}
	}
	g.Expect(out).NotTo(gomega.BeEmpty(), "no %s event on %s in the profile", typ, instanceType)
	return out
}

// applied reports whether the cloud has applied e (it does when it is
// next called after e's time).
func (e storm) applied(g gomega.Gomega) bool { return cloudState(g).Events > e.index }

// cloudState is the simulated cloud's state file.
func cloudState(g gomega.Gomega) *sim.State {
	state, err := sim.LoadState(statePath())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return state
}

// history logs the scenario's NodeClaims' changes as the guard saw them.
func (s *scenario) history() {
	for _, e := range s.guard.History() {
		s.t.Logf("%s nodeclaim %s %s", e.At.Format("15:04:05.000"), e.Name, e.Kind)
	}
}

// crashes serializes the scenarios' crashes of the controller (each kills
// the incumbent and waits for a successor to lead), and keeps them out of
// the storms' critical windows (which hold it for reading).
var crashes sync.RWMutex

// lease is the leader-election Lease's holder.
func leaseHolder() string {
	l := &coordinationv1.Lease{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKey{Namespace: "kube-system", Name: "capstan-controller"}, l); err != nil {
		return ""
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// crash kills the leading capstan (the oldest running; SIGKILL to its
// process group) and, unless a standby is already running, starts another
// with the same flags, then waits for a new holder of the Lease. It
// returns how long the cluster had no leader.
func crash(t *testing.T, g gomega.Gomega, standby bool) time.Duration {
	t.Helper()
	crashes.Lock()
	defer crashes.Unlock()
	before := leaseHolder()
	g.Expect(before).NotTo(gomega.BeEmpty(), "no leader to kill")
	killed := time.Now()
	g.Expect(cluster.Kill("capstan")).To(gomega.Succeed())
	if !standby {
		_, err := cluster.StartCapstan(controllerArgs()...)
		g.Expect(err).NotTo(gomega.HaveOccurred())
	}
	var after string
	g.Eventually(func() string {
		after = leaseHolder()
		return after
	}).WithTimeout(leaderless + 30*time.Second).WithPolling(200 * time.Millisecond).ShouldNot(gomega.Or(gomega.BeEmpty(), gomega.Equal(before)))
	down := time.Since(killed)
	t.Logf("killed leader %s; %s leads after %s", before, after, down.Round(100*time.Millisecond))
	return down
}

func describe(claims []v1.NodeClaim) string {
	var out []string
	for _, nc := range claims {
		out = append(out, fmt.Sprintf("%s(%s,%s,deleting=%t)", nc.Name, nc.Labels[v1.LabelInstanceType], nc.Labels[v1.CapacityTypeLabelKey], nc.DeletionTimestamp != nil))
	}
	return strings.Join(out, " ")
}
