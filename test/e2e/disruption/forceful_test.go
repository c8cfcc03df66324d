//go:build e2e

package disruption

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/drain"
	"github.com/capstan-dev/capstan/test/invariants"
	"github.com/capstan-dev/capstan/test/parity"
)

// Forceful scenarios: the cloud's events in testdata/cloud-profile.yaml
// come at fixed times after the controller started (60 s, 75 s), so these
// scenarios must be up before then; they start with the others, in
// parallel, and take a few seconds.
const (
	interruptionAt   = 60 * time.Second
	reservationEndAt = 75 * time.Second
)

// inZoneA pins a NodePool to us-west-2a, where the profile's events
// happen, and keeps consolidation out of the way.
func inZoneA(np *v1.NodePool) {
	np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-2a"}})
	np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never)
}

// reservation selects the reservation id for the scenario's nodes.
func reservation(id string) func(*simv1alpha1.SimNodeClass) {
	return func(snc *simv1alpha1.SimNodeClass) {
		snc.Spec.CapacityReservationSelectorTerms = []simv1alpha1.CapacityReservationSelectorTerm{{ID: id}}
	}
}

// A spot interruption (AWS style; the profile shortens the 2-minute
// notice to 20 s): the interrupted NodeClaims are deleted at the notice
// with its deadline, their replacements are initialized before it, the
// pods run again, and the PDB (one of two may be unavailable) holds
// throughout, though interruption ignores budgets.
func TestSpotInterruptionReplacedBeforeTheDeadline(t *testing.T) {
	t.Parallel()
	const replicas = 2
	s := start(t, setup{replicas: replicas, budget: "2", instanceTypes: []string{"c5.xlarge"}, capacityTypes: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand},
		maxUnavailable: ptr.To[int32](1), nodePool: inZoneA})
	old := claimNames(s.claims())
	for _, nc := range s.claims() {
		s.g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot), "the scenario needs spot nodes to interrupt")
		// Decision 7: Cluster API-style termination handlers find spot
		// nodes by this label, on the Node.
		node := &corev1.Node{}
		s.g.Expect(cluster.Client.Get(context.Background(), client.ObjectKey{Name: nc.Status.NodeName}, node)).To(gomega.Succeed())
		s.g.Expect(node.Labels).To(gomega.HaveKeyWithValue(v1.InterruptibleLabelKey, "true"))
	}
	s.g.Eventually(func(g gomega.Gomega) {
		for name := range old {
			nc := s.guard.Last(name)
			g.Expect(nc).NotTo(gomega.BeNil())
			g.Expect(nc.DeletionTimestamp).NotTo(gomega.BeNil(), "nodeclaim %s not interrupted", name)
		}
	}).WithTimeout(interruptionAt + 60*time.Second).Should(gomega.Succeed())
	var deadline time.Time
	for name := range old {
		nc := s.guard.Last(name)
		at, ok := drain.TerminationTimestamp(nc)
		s.g.Expect(ok).To(gomega.BeTrue(), "nodeclaim %s deleted without the notice's deadline", name)
		reason := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason)
		s.g.Expect(reason).NotTo(gomega.BeNil())
		s.g.Expect(reason.Reason).To(gomega.Equal(string(v1.DisruptionReasonInterrupted)))
		if deadline.IsZero() || at.Before(deadline) {
			deadline = at
		}
	}
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.running()).To(gomega.HaveLen(replicas))
		claims := s.claims()
		g.Expect(claims).To(gomega.HaveLen(replicas))
		for _, nc := range claims {
			g.Expect(old).NotTo(gomega.HaveKey(nc.Name))
		}
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	initialized := 0
	for _, e := range s.guard.History() {
		t.Logf("%s nodeclaim %s %s", e.At.Format("15:04:05.000"), e.Name, e.Kind)
		if e.Kind == invariants.Initialized && !old[e.Name] {
			initialized++
			if e.At.After(deadline) {
				t.Errorf("replacement %s initialized at %s, after the deadline %s", e.Name, e.At.Format(time.RFC3339Nano), deadline.Format(time.RFC3339))
			}
		}
	}
	if initialized < replicas {
		t.Errorf("%d replacements initialized, want %d", initialized, replicas)
	}
	s.expectEvent(old, "DisruptionTerminating", "interrupted (SpotInterruption)")
	nodes := map[string]bool{}
	for name := range old {
		nodes[s.guard.Last(name).Status.NodeName] = true
	}
	s.expectEvent(nodes, "SpotInterruption", "draining it now and launching replacements")
	s.checkParity()
}

// An expired node is deleted (reason Expired) and replaced, its pods
// running again on the replacement.
func TestExpiredNodeReplaced(t *testing.T) {
	t.Parallel()
	const expireAfter = 30 * time.Second
	s := start(t, setup{replicas: 1, budget: "1", instanceTypes: []string{"m5.large"}, nodePool: func(np *v1.NodePool) {
		np.Spec.Template.Spec.ExpireAfter = v1.MustParseNillableDuration(expireAfter.String())
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never)
	}})
	first := s.claims()[0]
	s.g.Eventually(func(g gomega.Gomega) {
		nc := s.guard.Last(first.Name)
		g.Expect(nc.DeletionTimestamp).NotTo(gomega.BeNil())
	}).WithTimeout(expireAfter + 30*time.Second).Should(gomega.Succeed())
	nc := s.guard.Last(first.Name)
	s.g.Expect(nc.DeletionTimestamp.Sub(nc.CreationTimestamp.Time)).To(gomega.BeNumerically(">=", expireAfter-time.Second), "deleted before it expired")
	reason := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason)
	s.g.Expect(reason).NotTo(gomega.BeNil())
	s.g.Expect(reason.Reason).To(gomega.Equal(string(v1.DisruptionReasonExpired)))
	s.g.Eventually(func(g gomega.Gomega) {
		pods := s.running()
		g.Expect(pods).To(gomega.HaveLen(1))
		g.Expect(pods[0].Spec.NodeName).NotTo(gomega.Equal(first.Status.NodeName))
	}).WithTimeout(30 * time.Second).Should(gomega.Succeed())
	s.expectEvent(map[string]bool{first.Name: true}, "DisruptionTerminating", "expired")
	s.checkParity()
}

// A reservation that ends turns its node on-demand (labels on the
// NodeClaim and Node, the capacity-type metric) and, on a NodePool that
// allows on-demand, nothing else happens: no drift, no churn.
func TestReservationEndRelabelsOnDemand(t *testing.T) {
	t.Parallel()
	s := start(t, setup{replicas: 1, budget: "1", instanceTypes: []string{"r5.large"}, capacityTypes: []string{v1.CapacityTypeReserved, v1.CapacityTypeOnDemand},
		nodeClass: reservation("cr-endsondemand"), nodePool: inZoneA})
	nc := s.claims()[0]
	s.g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.LabelCapacityReservationID, "cr-endsondemand"))
	s.g.Eventually(func(g gomega.Gomega) {
		got := &v1.NodeClaim{}
		g.Expect(cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(&nc), got)).To(gomega.Succeed())
		g.Expect(got.Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
		g.Expect(got.Labels).NotTo(gomega.HaveKey(v1.LabelCapacityReservationID))
		node := &corev1.Node{}
		g.Expect(cluster.Client.Get(context.Background(), client.ObjectKey{Name: got.Status.NodeName}, node)).To(gomega.Succeed())
		g.Expect(node.Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
		g.Expect(node.Labels).NotTo(gomega.HaveKey(v1.LabelCapacityReservationID))
		g.Expect(scrape(g)).To(gomega.ContainSubstring(fmt.Sprintf(`capstan_nodes{capacity_type="on-demand",nodepool=%q} 1`, s.np.Name)))
	}).WithTimeout(reservationEndAt + 90*time.Second).Should(gomega.Succeed())
	s.expectEvent(map[string]bool{nc.Name: true}, "CapacityReservationEnded", "cr-endsondemand")
	s.untouched(map[string]bool{nc.Name: true})
	for _, e := range s.guard.History() {
		if e.Kind == invariants.Drifted {
			t.Errorf("nodeclaim %s drifted; the NodePool allows on-demand", e.Name)
		}
	}
	s.checkParity(parity.ReservationEndSeen)
}

// On a NodePool that allows reserved and spot but not on-demand, the
// node whose reservation ended is relabelled on-demand, so it has
// drifted, and it is replaced (pre-spun) by a spot node.
func TestReservationEndDriftsWithoutOnDemand(t *testing.T) {
	t.Parallel()
	s := start(t, setup{replicas: 1, budget: "1", instanceTypes: []string{"r5.xlarge"}, capacityTypes: []string{v1.CapacityTypeReserved, v1.CapacityTypeSpot},
		nodeClass: reservation("cr-endsspot"), nodePool: inZoneA})
	old := claimNames(s.claims())
	for _, nc := range s.claims() {
		s.g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.LabelCapacityReservationID, "cr-endsspot"))
	}
	s.g.Eventually(func(g gomega.Gomega) {
		claims := s.claims()
		g.Expect(claims).To(gomega.HaveLen(1))
		g.Expect(old).NotTo(gomega.HaveKey(claims[0].Name))
		g.Expect(claims[0].Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot))
		g.Expect(s.running()).To(gomega.HaveLen(1))
	}).WithTimeout(reservationEndAt + 120*time.Second).Should(gomega.Succeed())
	history := s.guard.History()
	for name := range old {
		nc := s.guard.Last(name)
		g := s.g
		g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand), "relabelled before it went")
		drifted := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDrifted)
		g.Expect(drifted).NotTo(gomega.BeNil())
		g.Expect(drifted.Reason).To(gomega.Equal("RequirementsDrifted"))
	}
	for _, v := range invariants.PreSpun(history, old) {
		t.Error(v)
	}
	s.checkParity(parity.ReservationEndSeen)
}

// scrape reads the controller's metrics.
func scrape(g gomega.Gomega) string {
	resp, err := http.Get(metricsURL)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return strings.TrimSpace(string(body))
}

// No spot until 110 s in: the nodes fall back to on-demand; once spot
// has been available for the NodePool's return-to-preferred-after,
// they return to spot one at a time (the budget), each replacement up
// before its node drains, the PDB holding, failed attempts backing off.
func TestFallbackReturnsToSpot(t *testing.T) {
	t.Parallel()
	const replicas = 2
	s := start(t, setup{replicas: replicas, budget: "1", instanceTypes: []string{"c5.2xlarge"}, capacityTypes: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand},
		maxUnavailable: ptr.To[int32](1), nodePool: func(np *v1.NodePool) {
			inZoneA(np)
			np.Annotations = map[string]string{v1.ReturnToPreferredAfterAnnotationKey: "5s"}
		}})
	old := claimNames(s.claims())
	for _, nc := range s.claims() {
		s.g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand), "spot is short: the scenario needs fallback nodes")
	}
	s.g.Eventually(func(g gomega.Gomega) {
		claims := s.claims()
		g.Expect(claims).To(gomega.HaveLen(replicas))
		for _, nc := range claims {
			g.Expect(old).NotTo(gomega.HaveKey(nc.Name))
			g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot))
		}
		g.Expect(s.running()).To(gomega.HaveLen(replicas))
	}).WithTimeout(interruptionAt + 2*time.Minute).Should(gomega.Succeed())
	history := s.guard.History()
	for _, e := range history {
		t.Logf("%s nodeclaim %s %s", e.At.Format("15:04:05.000"), e.Name, e.Kind)
	}
	for _, v := range invariants.PreSpun(history, old) {
		t.Error(v)
	}
	if got := s.guard.Peak(); got > 1 {
		t.Errorf("%d nodeclaims were deleting at once; the budget allows 1", got)
	}
	for name := range old {
		nc := s.guard.Last(name)
		reason := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason)
		if reason == nil || reason.Message != "ReturnToPreferred" {
			t.Errorf("nodeclaim %s went with disruption reason %+v, want ReturnToPreferred's", name, reason)
		}
	}
	s.expectEvent(old, "DisruptionLaunching", "ReturnToPreferred (Underutilized)")
	s.checkParity()
}
