//go:build e2e

package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/test/invariants"
)

// ICE storm: spot c6i.large runs out in every zone (the profile's
// CapacityChange) under a NodePool that allows it and on-demand, with
// consolidation on. Once the storm has come, the scenario scales a
// Deployment up (its launches meet the shortage and fall back to
// on-demand) and then scales the one it started with to zero (its nodes
// empty, consolidation removes them). The pods end Running on on-demand
// nodes, exactly one launched per new pod, the PDB and the budget hold and
// nothing leaks.
func TestICEStormFallsBackToOnDemand(t *testing.T) {
	t.Parallel()
	const steady, burst = 2, 3
	s := start(t, setup{workloads: []workload{{name: "steady", replicas: steady}, {name: "burst", replicas: 0}}, budget: 1, consolidate: true,
		instanceTypes: []string{"c6i.large"}, capacityTypes: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}, minAvailable: ptr.To[int32](steady)})
	// Launched before the storm, the steady nodes are spot; after it, they
	// met it already.
	before := s.claims()[0].Labels[v1.CapacityTypeLabelKey]
	ice := storms(s.g, simv1alpha1.EventCapacityChange, "c6i.large")[0]
	s.g.Eventually(ice.applied).WithTimeout(time.Until(ice.at)+time.Minute).Should(gomega.BeTrue(), "the storm did not come")

	s.scale("burst", burst)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.running()).To(gomega.HaveLen(steady + burst))
	}).WithTimeout(3*time.Minute).Should(gomega.Succeed(), s.dump)
	s.scale("steady", 0)
	s.settled(burst, 3*time.Minute)

	for _, nc := range s.claims() {
		s.g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand), "nodeclaim %s", nc.Name)
	}
	// Every launch of the storm found spot gone: no spot node came up
	// after it, and a failed launch left no NodeClaim behind.
	launched := 0
	for _, e := range s.guard.History() {
		if e.Kind != invariants.Created || s.initial[e.Name] {
			continue
		}
		if nc := s.guard.Last(e.Name); nc.Status.ProviderID != "" {
			launched++
			s.g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand), "nodeclaim %s launched after the storm", nc.Name)
		}
	}
	s.g.Expect(launched).To(gomega.Equal(burst), "nodeclaims launched for %d new pods", burst)
	failed := launchFailures(s.g, s.np.Name)
	s.g.Expect(failed).NotTo(gomega.BeEmpty(), "no launch of the scenario met the storm")
	s.leakFree()
	s.history()
	s.summary(fmt.Sprintf("; steady nodes launched %s; launches failed for insufficient capacity %d; nodeclaims launched %d", before, len(failed), launched))
}

// scale sets the replicas of the scenario's Deployment name.
func (s *scenario) scale(name string, replicas int32) {
	d := s.deploy[name]
	s.g.Expect(cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(d), d)).To(gomega.Succeed())
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To(replicas)
	s.g.Expect(cluster.Client.Patch(context.Background(), d, patch)).To(gomega.Succeed())
}

// launchFailures are the NodePool's NodeClaims whose launch failed for
// insufficient capacity.
func launchFailures(g gomega.Gomega, nodePool string) []string {
	events := &corev1.EventList{}
	g.Expect(cluster.Client.List(context.Background(), events)).To(gomega.Succeed())
	var out []string
	for _, e := range events.Items {
		if e.Reason == "InsufficientCapacity" && e.InvolvedObject.Kind == "NodeClaim" && strings.HasPrefix(e.InvolvedObject.Name, nodePool+"-") {
			out = append(out, e.InvolvedObject.Name)
		}
	}
	return out
}
