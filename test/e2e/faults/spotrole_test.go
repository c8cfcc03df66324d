//go:build e2e

package faults

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// A spot launch refused because the account has no spot service-linked
// role (the profile's fault on t3.large, once) marks spot unavailable
// account-wide and falls back to on-demand at once, with an event saying
// why; spot comes back once the mark expires. Not parallel: the mark
// covers every NodePool's spot, so it runs before the parallel scenarios,
// and ends when spot launches again.
func TestSpotServiceLinkedRoleFallsBackToOnDemand(t *testing.T) {
	s := start(t, setup{workloads: []workload{{name: "role", replicas: 1}}, budget: 1,
		instanceTypes: []string{"t3.large"}, capacityTypes: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}})
	claims := s.claims()
	s.g.Expect(claims).To(gomega.HaveLen(1))
	s.g.Expect(claims[0].Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
	var refused []corev1.Event
	s.g.Eventually(func(g gomega.Gomega) {
		refused = eventsOf(g, s.np.Name, "SpotServiceLinkedRoleCreationFailed")
		g.Expect(refused).NotTo(gomega.BeEmpty())
		g.Expect(refused[0].Message).To(gomega.ContainSubstring("AuthFailure.ServiceLinkedRoleCreationNotPermitted"))
	}).Should(gomega.Succeed())
	// At once: no refusal retried, no launch timeout waited out; the
	// on-demand NodeClaim follows the refused one within a batch.
	s.g.Expect(eventsOf(s.g, s.np.Name, "LaunchFailed")).To(gomega.BeEmpty())
	s.g.Expect(eventsOf(s.g, s.np.Name, "LaunchTimeout")).To(gomega.BeEmpty())
	refusedAt := refused[0].EventTime.Time
	if refusedAt.IsZero() {
		refusedAt = refused[0].FirstTimestamp.Time
	}
	s.g.Expect(claims[0].CreationTimestamp.Sub(refusedAt)).To(gomega.BeNumerically("<", 5*time.Second), "on-demand NodeClaim created %s after the refusal", claims[0].CreationTimestamp.Sub(refusedAt))

	// The fault fired once: once the mark has expired, spot launches
	// again.
	time.Sleep(time.Until(refusedAt.Add(unavailableTTL() + time.Second)))
	s.scale("role", 2)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.running()).To(gomega.HaveLen(2))
		var spot int
		for _, nc := range s.claims() {
			if nc.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeSpot && nc.Status.NodeName != "" {
				spot++
			}
		}
		g.Expect(spot).To(gomega.BeNumerically(">=", 1))
	}).WithTimeout(unavailableTTL()+time.Minute).Should(gomega.Succeed(), s.dump)
	s.checkParity()
}

// eventsOf are the events of reason on the NodePool's NodeClaims.
func eventsOf(g gomega.Gomega, nodePool, reason string) []corev1.Event {
	events := &corev1.EventList{}
	g.Expect(cluster.Client.List(context.Background(), events)).To(gomega.Succeed())
	var out []corev1.Event
	for _, e := range events.Items {
		if e.Reason == reason && e.InvolvedObject.Kind == "NodeClaim" && strings.HasPrefix(e.InvolvedObject.Name, nodePool+"-") {
			out = append(out, e)
		}
	}
	return out
}
