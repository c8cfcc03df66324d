//go:build e2e

package faults

import (
	"context"
	"fmt"
	"slices"
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
)

// Interruption storm: five spot nodes, four pinned to r6i.large and one to
// r6i.xlarge, and the profile interrupts every spot r6i.xlarge (30 s
// notices): one node in five. Its NodeClaim is deleted with the notice's
// deadline, a replacement launched and initialized before it, the pod
// runs on the new node, the four others are untouched, the PDB (one of
// five may be unavailable) holds and nothing leaks.
func TestInterruptionStormReplacedBeforeTheDeadline(t *testing.T) {
	t.Parallel()
	const large = 4
	// The r6i.xlarge pod is also pinned to a zone, so its replacement
	// stays in that zone, whose spot pool the notice has just said is
	// short: it is not what the profile's next storm hits.
	const zone = "us-west-2a"
	ctx := context.Background()
	s := start(t, setup{workloads: []workload{{name: "large", replicas: large, instanceType: "r6i.large"}, {name: "xlarge", replicas: 0, instanceType: "r6i.xlarge"}},
		budget: 1, instanceTypes: []string{"r6i.large", "r6i.xlarge"}, capacityTypes: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand},
		maxUnavailable: ptr.To[int32](1)})
	for _, nc := range s.claims() {
		s.g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot), "the scenario needs spot nodes")
	}
	var victim, replacement *v1.NodeClaim
	var pod string
	next := s.beforeStorm(storms(s.g, simv1alpha1.EventSpotInterruption, "r6i.xlarge"))
	func() {
		defer crashes.RUnlock()
		d := s.deploy["xlarge"]
		s.g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(d), d)).To(gomega.Succeed())
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Template.Spec.NodeSelector[v1.LabelZone] = zone
		d.Spec.Replicas = ptr.To[int32](1)
		s.g.Expect(cluster.Client.Patch(ctx, d, patch)).To(gomega.Succeed())
		s.parity.Apply(t, d)
		s.guard.SetMinAvailable(s.ns+"/"+s.pdb.Name, large)
		s.g.Eventually(func(g gomega.Gomega) {
			p := s.xlarge(g)
			victim = nil
			for _, nc := range s.claims() {
				if nc.Status.NodeName == p.Spec.NodeName {
					victim, pod = &nc, p.Name
				}
			}
			g.Expect(victim).NotTo(gomega.BeNil(), "pod %s's nodeclaim", p.Name)
		}).WithTimeout(time.Until(next.at)).Should(gomega.Succeed(), s.dump)
		s.g.Expect(victim.Labels).To(gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot))
		s.g.Expect(next.applied(s.g)).To(gomega.BeFalse(), "the storm came before the node was up")
		s.initial[victim.Name], s.pods[pod] = true, true
		t.Logf("nodeclaim %s (node %s) up, the storm due in %s", victim.Name, victim.Status.NodeName, time.Until(next.at).Round(time.Second))

		s.g.Eventually(func() *v1.NodeClaim {
			return s.guard.Last(victim.Name)
		}).WithTimeout(time.Until(next.at)+time.Minute).Should(gomega.HaveField("DeletionTimestamp", gomega.Not(gomega.BeNil())), "nodeclaim %s not interrupted", victim.Name)
		s.g.Eventually(func(g gomega.Gomega) {
			p := s.xlarge(g)
			g.Expect(p.Spec.NodeName).NotTo(gomega.Equal(victim.Status.NodeName))
			replacement = nil
			for _, nc := range s.claims() {
				if nc.Status.NodeName == p.Spec.NodeName {
					replacement = &nc
				}
			}
			g.Expect(replacement).NotTo(gomega.BeNil(), "pod %s's nodeclaim", p.Name)
			g.Expect(meta.IsStatusConditionTrue(replacement.Status.Conditions, v1.ConditionTypeInitialized)).To(gomega.BeTrue())
		}).WithTimeout(time.Minute).Should(gomega.Succeed(), s.dump)
	}()

	interrupted := s.guard.Last(victim.Name)
	reason := meta.FindStatusCondition(interrupted.Status.Conditions, v1.ConditionTypeDisruptionReason)
	s.g.Expect(reason).NotTo(gomega.BeNil(), "nodeclaim %s deleted without a reason", victim.Name)
	s.g.Expect(reason.Reason).To(gomega.Equal(string(v1.DisruptionReasonInterrupted)))
	deadline, ok := drain.TerminationTimestamp(interrupted)
	s.g.Expect(ok).To(gomega.BeTrue(), "nodeclaim %s deleted without the notice's deadline", victim.Name)
	initialized := meta.FindStatusCondition(replacement.Status.Conditions, v1.ConditionTypeInitialized).LastTransitionTime.Time
	s.g.Expect(initialized).NotTo(gomega.BeTemporally(">", deadline), "replacement %s initialized after the deadline", replacement.Name)

	s.settled(large+1, time.Minute)
	s.g.Expect(s.claims()).NotTo(gomega.ContainElement(gomega.HaveField("Name", victim.Name)))
	for _, e := range s.guard.History() {
		if e.Kind == invariants.Deleting && e.Name != victim.Name {
			t.Errorf("nodeclaim %s deleted too; only %s was interrupted", e.Name, victim.Name)
		}
	}
	s.leakFree()
	s.history()
	s.summary(fmt.Sprintf("; replacement %s (%s) initialized %s before the deadline",
		replacement.Name, replacement.Labels[v1.CapacityTypeLabelKey], deadline.Sub(initialized)))
	s.checkParity()
}

// xlarge is the scenario's Running r6i.xlarge pod.
func (s *scenario) xlarge(g gomega.Gomega) corev1.Pod {
	pods := slices.DeleteFunc(s.running(), func(p corev1.Pod) bool { return p.Labels["workload"] != "xlarge" })
	g.Expect(pods).To(gomega.HaveLen(1), "running r6i.xlarge pods")
	return pods[0]
}

// beforeStorm waits until the first of storms yet to come is lead away and
// returns it, holding crashes off (crashes.RLock, which the caller
// releases): a controller killed under a 30 s notice would miss its
// deadline by design.
func (s *scenario) beforeStorm(storms []storm) storm {
	// lead is ample for one node to come up (a 5 s launch) even on a busy
	// machine; pace is the slack in taking the lock.
	const lead, pace = 30 * time.Second, 5 * time.Second
	for {
		i := slices.IndexFunc(storms, func(e storm) bool { return !e.applied(s.g) })
		s.g.Expect(i).NotTo(gomega.Equal(-1), "no storm left in the profile")
		next := storms[i]
		time.Sleep(time.Until(next.at) - lead - pace)
		crashes.RLock()
		if time.Until(next.at) >= lead {
			return next
		}
		// A crash held the lock too long: the storm after this one.
		crashes.RUnlock()
		s.g.Eventually(next.applied).WithTimeout(time.Until(next.at)+time.Minute).Should(gomega.BeTrue(), "the storm did not come")
	}
}
