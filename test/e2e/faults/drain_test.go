//go:build e2e

package faults

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/test/invariants"
)

// Capstan killed mid-drain: a NodeClaim is deleted while its pod is held
// by a PDB that allows no disruption, so every eviction is refused; the
// controller is SIGKILLed and restarted while the node carries its
// deletionTimestamp, and only then is the PDB relaxed. The restarted
// controller must carry the drain on: the pod is evicted and runs
// elsewhere, the node and its instance go, the PDB held throughout and
// nothing leaks.
func TestKilledMidDrain(t *testing.T) {
	t.Parallel()
	const replicas = 2
	ctx := context.Background()
	s := start(t, setup{workloads: []workload{{name: "drain", replicas: replicas}}, budget: 1,
		instanceTypes: []string{"c5.large"}, minAvailable: ptr.To[int32](replicas)})
	victim := s.claims()[0]
	s.g.Expect(cluster.Client.Delete(ctx, &victim)).To(gomega.Succeed())
	var held corev1.Pod
	s.g.Eventually(func(g gomega.Gomega) {
		n := node(&victim)
		g.Expect(n).NotTo(gomega.BeNil(), "nodeclaim %s's node", victim.Name)
		g.Expect(n.DeletionTimestamp).NotTo(gomega.BeNil(), "node %s not deleted yet", n.Name)
		g.Expect(disrupted(n)).To(gomega.BeTrue(), "node %s not tainted", n.Name)
		held = podOn(g, s, n.Name)
	}).WithTimeout(time.Minute).Should(gomega.Succeed(), s.dump)
	t.Logf("killing capstan while node %s drains, pod %s held by the PDB", victim.Status.NodeName, held.Name)
	down := crash(t, s.g, false)
	// Once a node for the held pod is up (launched by the restarted
	// controller, if its predecessor had not), the pod must still be held.
	s.g.Eventually(func() []invariants.ClaimEvent {
		return slices.DeleteFunc(s.guard.History(), func(e invariants.ClaimEvent) bool { return e.Kind != invariants.Initialized || s.initial[e.Name] })
	}).WithTimeout(2*time.Minute).ShouldNot(gomega.BeEmpty(), "no replacement initialized for the held pod: %s", describe(s.claims()))
	s.g.Expect(podOn(s.g, s, victim.Status.NodeName).Name).To(gomega.Equal(held.Name), "the pod left before the PDB allowed it")

	s.guard.SetMinAvailable(s.ns+"/"+s.pdb.Name, replicas-1)
	pdb := &policyv1.PodDisruptionBudget{}
	s.g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(s.pdb), pdb)).To(gomega.Succeed())
	patch := client.MergeFrom(pdb.DeepCopy())
	pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(replicas - 1))
	s.g.Expect(cluster.Client.Patch(ctx, pdb, patch)).To(gomega.Succeed())

	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.claims()).NotTo(gomega.ContainElement(gomega.HaveField("Name", victim.Name)), "nodeclaim %s still there", victim.Name)
		n := &corev1.Node{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Name: victim.Status.NodeName}, n)).NotTo(gomega.Succeed(), "node %s still there", victim.Status.NodeName)
		for _, p := range s.running() {
			g.Expect(p.Spec.NodeName).NotTo(gomega.Equal(victim.Status.NodeName))
		}
	}).WithTimeout(2*time.Minute).Should(gomega.Succeed(), s.dump)
	s.settled(replicas, time.Minute)
	s.leakFree()
	s.history()
	s.summary("; leaderless " + down.Round(time.Second).String())
}

// podOn is the scenario's one pod on node, which must be Running and not
// terminating.
func podOn(g gomega.Gomega, s *scenario, node string) corev1.Pod {
	var on []corev1.Pod
	for _, p := range s.running() {
		if p.Spec.NodeName == node {
			on = append(on, p)
		}
	}
	g.Expect(on).To(gomega.HaveLen(1), "running pods on node %s", node)
	return on[0]
}
