//go:build e2e

package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/test/invariants"
)

// ICE storm: spot c6i.large runs out in every zone (the profile's
// CapacityChange) under a NodePool that allows it and on-demand, with
// consolidation on. Once the storm has come, the scenario scales a
// Deployment up (a launch fails for insufficient capacity, the rest fall
// back to on-demand) and then scales the one it started with to zero (its
// nodes empty, consolidation removes them). The pods end Running on
// on-demand nodes, exactly one launched per new pod, the PDB and the
// budget hold and nothing leaks.
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
	// The controller plans around an offering whose launch failed for a
	// while: once no such mark from the steady nodes' launches (those that
	// came after the storm) is left, the scale-up tries spot and meets the
	// storm itself.
	ttl := unavailableTTL()
	s.g.Eventually(func() time.Duration {
		var last time.Time
		for _, e := range launchFailures(s.g, s.np.Name) {
			if e.EventTime.After(last) {
				last = e.EventTime.Time
			}
		}
		return time.Since(last)
	}).WithTimeout(ttl + time.Minute).Should(gomega.BeNumerically(">", ttl))

	s.scale("burst", burst)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.running()).To(gomega.HaveLen(steady + burst))
	}).WithTimeout(3*time.Minute).Should(gomega.Succeed(), s.dump)
	s.scale("steady", 0)
	s.settled(burst, 3*time.Minute)

	for _, nc := range s.claims() {
		s.g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand), "nodeclaim %s", nc.Name)
	}
	// No spot node came up after the storm, one node came up per new pod
	// and a failed launch left no NodeClaim behind.
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
	// The scale-up's first launch at least (and any consolidation that
	// tried spot since) failed for insufficient capacity.
	failed := 0
	for _, e := range launchFailures(s.g, s.np.Name) {
		if s.guard.Last(e.InvolvedObject.Name) != nil {
			failed++
		}
	}
	s.g.Expect(failed).To(gomega.BeNumerically(">", 0), "no launch met the storm")
	s.leakFree()
	s.history()
	s.summary(fmt.Sprintf("; steady nodes launched %s; launches failed for insufficient capacity %d; nodeclaims launched %d", before, failed, launched))
	s.checkParity()
}

// scale sets the replicas of the scenario's Deployment name.
func (s *scenario) scale(name string, replicas int32) {
	d := s.deploy[name]
	s.g.Expect(cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(d), d)).To(gomega.Succeed())
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To(replicas)
	s.g.Expect(cluster.Client.Patch(context.Background(), d, patch)).To(gomega.Succeed())
	s.parity.Apply(s.t, d)
}

// launchFailures are the events of the NodePool's NodeClaims whose launch
// failed for insufficient capacity.
func launchFailures(g gomega.Gomega, nodePool string) []corev1.Event {
	events := &corev1.EventList{}
	g.Expect(cluster.Client.List(context.Background(), events)).To(gomega.Succeed())
	return slices.DeleteFunc(events.Items, func(e corev1.Event) bool {
		return e.Reason != "InsufficientCapacity" || e.InvolvedObject.Kind != "NodeClaim" || !strings.HasPrefix(e.InvolvedObject.Name, nodePool+"-")
	})
}

// unavailableTTL is how long the controller keeps an offering whose
// launch failed unavailable: its --unavailable-offerings-ttl.
func unavailableTTL() time.Duration {
	for _, arg := range controllerArgs() {
		if v, ok := strings.CutPrefix(arg, "--unavailable-offerings-ttl="); ok {
			if d, err := time.ParseDuration(v); err == nil {
				return d
			}
		}
	}
	return cloudprovider.DefaultUnavailableOfferingsTTL
}
