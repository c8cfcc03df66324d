//go:build e2e

package disruption

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
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

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/test/parity"
)

// consolidationQuality is how much dearer than a fresh solve of the
// remaining pods the consolidated cluster may end (issue 19's e2e bound).
const consolidationQuality = 1.25

// consolidating makes a NodePool consolidate underutilized nodes at once.
func consolidating(np *v1.NodePool) {
	np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
	np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("0s")
}

// A 30-replica Deployment whose pods share nodes, scaled to 5, the
// survivors spread one per node: consolidation packs them until the
// NodePool costs no more than 1.25× what `capstan simulate` launches for
// 5 replicas from scratch, with no pod Pending longer than a launch, the
// PDB (maxUnavailable 1) held and never more nodes deleting at once than
// the budget of 2.
func TestConsolidationAfterScaleDown(t *testing.T) {
	t.Parallel()
	const budget, replicas, remaining = 2, 30, 5
	s := start(t, setup{replicas: replicas, budget: "2", shared: true, maxUnavailable: ptr.To[int32](1),
		instanceTypes: []string{"m5.large", "m5.xlarge"}, capacityTypes: []string{v1.CapacityTypeOnDemand}, nodePool: consolidating,
		pending: pendingBound})
	before := s.claims()
	fresh := freshSolveCost(t, s, remaining)
	full, err := hourlyCost(before)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	t.Logf("%d replicas on %d nodes at %.4f/h; a fresh solve of %d replicas costs %.4f/h", replicas, len(before), full, remaining, fresh)
	s.keepSpread(remaining)
	s.scale(remaining)

	// The timeout is generous: the controller runs one command at a time
	// for every scenario (some twenty run beside this one), and a drain
	// the PDB holds retries its eviction after up to 15 s (one to three
	// minutes is usual).
	var cost float64
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.running()).To(gomega.HaveLen(remaining))
		claims := s.claims()
		for _, nc := range claims {
			g.Expect(nc.DeletionTimestamp).To(gomega.BeNil(), "nodeclaim %s is being deleted", nc.Name)
			g.Expect(meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeInitialized)).To(gomega.BeTrue(), "nodeclaim %s not initialized", nc.Name)
		}
		var err error
		cost, err = hourlyCost(claims)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(cost).To(gomega.BeNumerically("<=", consolidationQuality*fresh), "%d nodes at %.4f/h", len(claims), cost)
	}).WithTimeout(300 * time.Second).Should(gomega.Succeed())
	after := s.claims()
	t.Logf("consolidated to %d nodes %v at %.4f/h: %.3f× the fresh solve", len(after), types(after), cost, cost/fresh)

	history := s.guard.History()
	for _, e := range history {
		t.Logf("%s nodeclaim %s %s", e.At.Format("15:04:05.000"), e.Name, e.Kind)
	}
	consolidated := 0
	for _, nc := range before {
		if e := event(map[string]bool{nc.Name: true}, "DisruptionTerminating", ""); e != nil {
			t.Logf("%s (%s): %s", nc.Name, nc.Labels[v1.LabelInstanceType], e.Message)
			if strings.Contains(e.Message, "Consolidation (Underutilized)") {
				consolidated++
			}
		}
	}
	if consolidated == 0 {
		t.Errorf("none of the %d nodes was removed by consolidation: the test did not exercise it", len(before))
	}
	d, pod := s.guard.LongestPending()
	t.Logf("longest Pending: %s (%s); at most %d nodeclaims deleting at once", d, pod, s.guard.Peak())
	if d > pendingBound {
		t.Errorf("pod %s was Pending for %s; consolidation should move it within %s", pod, d, pendingBound)
	}
	if got := s.guard.Peak(); got > budget {
		t.Errorf("%d nodeclaims were deleting at once; the budget allows %d", got, budget)
	}
	s.checkParity(parity.ScaleDownPacking)
}

// An on-demand node moves into a reservation slot that frees up. The
// NodePool allows c5.large reserved (one slot of cr-consolidation, which
// only this scenario's SimNodeClass selects) and on-demand; of two pods
// needing a node each, one takes the slot and the other lands on
// on-demand. Scaling to one drops the pod on the reserved node (lowest
// pod-deletion-cost); Emptiness removes that node, freeing the slot, and
// consolidation replaces the on-demand node by a reserved one.
func TestConsolidationMovesIntoFreedReservation(t *testing.T) {
	t.Parallel()
	const reservation = "cr-consolidation"
	s := start(t, setup{replicas: 2, budget: "1", instanceTypes: []string{"c5.large"}, pending: pendingBound,
		capacityTypes: []string{v1.CapacityTypeReserved, v1.CapacityTypeOnDemand}, nodePool: consolidating,
		nodeClass: func(nc *simv1alpha1.SimNodeClass) {
			nc.Spec.CapacityReservationSelectorTerms = []simv1alpha1.CapacityReservationSelectorTerm{{ID: reservation}}
		}})
	var onDemand, reserved *v1.NodeClaim
	for _, nc := range s.claims() {
		switch nc.Labels[v1.CapacityTypeLabelKey] {
		case v1.CapacityTypeOnDemand:
			onDemand = &nc
		case v1.CapacityTypeReserved:
			reserved = &nc
		}
	}
	if onDemand == nil || reserved == nil {
		t.Fatalf("want one reserved and one on-demand nodeclaim, got %v", capacityTypes(s.claims()))
	}
	s.g.Expect(reserved.Labels).To(gomega.HaveKeyWithValue(v1.LabelCapacityReservationID, reservation))

	// The ReplicaSet deletes the pod of lowest deletion cost first.
	for _, p := range s.running() {
		if p.Spec.NodeName == reserved.Status.NodeName {
			patch := client.MergeFrom(p.DeepCopy())
			metav1.SetMetaDataAnnotation(&p.ObjectMeta, corev1.PodDeletionCost, "-1000")
			s.g.Expect(cluster.Client.Patch(context.Background(), &p, patch)).To(gomega.Succeed())
		}
	}
	s.scale(1)

	s.g.Eventually(func(g gomega.Gomega) {
		claims := s.claims()
		g.Expect(capacityTypes(claims)).To(gomega.Equal([]string{v1.CapacityTypeReserved + "/" + reservation}))
		nc := claims[0]
		g.Expect(nc.DeletionTimestamp).To(gomega.BeNil())
		pods := s.running()
		g.Expect(pods).To(gomega.HaveLen(1))
		g.Expect(pods[0].Spec.NodeName).To(gomega.Equal(nc.Status.NodeName))
	}).WithTimeout(120 * time.Second).Should(gomega.Succeed())
	for _, e := range s.guard.History() {
		t.Logf("%s nodeclaim %s %s", e.At.Format("15:04:05.000"), e.Name, e.Kind)
	}
	if e := event(map[string]bool{onDemand.Name: true}, "DisruptionTerminating", "Consolidation (Underutilized)"); e == nil {
		t.Errorf("on-demand nodeclaim %s went without a DisruptionTerminating event from consolidation", onDemand.Name)
	} else {
		t.Logf("%s: %s", onDemand.Name, e.Message)
	}
	d, pod := s.guard.LongestPending()
	t.Logf("longest Pending: %s (%s)", d, pod)
	if d > pendingBound {
		t.Errorf("pod %s was Pending for %s; a pre-spun replacement should take it within %s", pod, d, pendingBound)
	}
	s.checkParity(parity.ScaleDownChoice)
}

// keepSpread makes the pods that survive a scale-down to n one per node
// as far as they go (the ReplicaSet deletes pods of lower
// controller.kubernetes.io/pod-deletion-cost first), so no node empties
// by the scale-down alone: the worst start for consolidation, and every
// saving is its own.
func (s *scenario) keepSpread(n int) {
	s.t.Helper()
	byNode := map[string][]corev1.Pod{}
	var nodes []string
	for _, p := range s.running() {
		if byNode[p.Spec.NodeName] == nil {
			nodes = append(nodes, p.Spec.NodeName)
		}
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
	}
	slices.Sort(nodes)
	for kept, last := 0, -1; kept < n && kept != last; {
		last = kept
		for _, node := range nodes {
			if kept == n || len(byNode[node]) == 0 {
				continue
			}
			p := byNode[node][0]
			byNode[node] = byNode[node][1:]
			patch := client.MergeFrom(p.DeepCopy())
			metav1.SetMetaDataAnnotation(&p.ObjectMeta, corev1.PodDeletionCost, "1000")
			s.g.Expect(cluster.Client.Patch(context.Background(), &p, patch)).To(gomega.Succeed())
			kept++
		}
	}
}

// hourlyCost is what the claims' instances cost an hour, at the prices
// the simulated cloud launched them at (its inventory, the state file).
// Every claim must have a live instance.
func hourlyCost(claims []v1.NodeClaim) (float64, error) {
	st, err := sim.LoadState(filepath.Join(cluster.Root, "sim-state.json"))
	if err != nil {
		return 0, err
	}
	names := claimNames(claims)
	total, found := 0.0, 0
	for _, inst := range st.Instances {
		if names[inst.NodeClaim] && inst.State != sim.InstanceTerminated {
			total += inst.Price
			found++
		}
	}
	if found != len(names) {
		return 0, fmt.Errorf("%d of %d nodeclaims have a live instance", found, len(names))
	}
	return total, nil
}

// freshSolveCost is the hourly cost of the nodes `capstan simulate`
// launches for the scenario with replicas pods from scratch: its
// SimNodeClass, NodePool and Deployment as created, the controller's
// cloud profile and timings.
func freshSolveCost(t *testing.T, s *scenario, replicas int32) float64 {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	script, err := parity.NewScript(clk)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	class := &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: s.np.Spec.Template.Spec.NodeClassRef.Name}}
	deploy := s.deploy.DeepCopy()
	deploy.Spec.Replicas = ptr.To(replicas)
	s.g.Expect(script.Apply(class, s.np, deploy)).To(gomega.Succeed())
	result, err := parity.Simulate(context.Background(), script, clk.Now(), controllerArgs(), 10*time.Minute, t.TempDir())
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	cost, nodes := 0.0, []string{}
	for _, n := range result.Nodes {
		if n.DeletedAt == "" {
			cost += n.PricePerHour
			nodes = append(nodes, n.InstanceType+"/"+n.CapacityType)
		}
	}
	running := 0
	for _, p := range result.Pods {
		if p.Node != "" {
			running++
		}
	}
	s.g.Expect(running).To(gomega.Equal(int(replicas)), "simulate placed every replica")
	s.g.Expect(cost).To(gomega.BeNumerically(">", 0))
	t.Logf("capstan simulate, %d replicas from scratch: %v", replicas, nodes)
	return cost
}

// types are the claims' instance and capacity types.
func types(claims []v1.NodeClaim) []string {
	out := make([]string, 0, len(claims))
	for _, nc := range claims {
		out = append(out, nc.Labels[v1.LabelInstanceType]+"/"+nc.Labels[v1.CapacityTypeLabelKey])
	}
	return out
}

// capacityTypes are the claims' capacity types and reservations.
func capacityTypes(claims []v1.NodeClaim) []string {
	out := make([]string, 0, len(claims))
	for _, nc := range claims {
		out = append(out, nc.Labels[v1.CapacityTypeLabelKey]+"/"+nc.Labels[v1.LabelCapacityReservationID])
	}
	return out
}
