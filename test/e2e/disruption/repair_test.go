//go:build e2e

package disruption

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/drain"
	"github.com/capstan-dev/capstan/test/invariants"
)

// kubeletStopAt is when testdata/cloud-profile.yaml stops the kubelets of
// 3 of TestRepairWithinTheBudget's 5 nodes.
const kubeletStopAt = 90 * time.Second

// Three of a NodePool's five nodes lose their kubelet (docs/disruption.md,
// "Node repair"): its capstan.dev/repair-max-unhealthy "60%" (3) lets
// them be repaired, its capstan.dev/repair-budget "1" one at a time (the
// guard holds Unhealthy deletions to 1). Each is replaced before its pods
// are drained: its replacement initialized before it is deleted, which
// then drains it at once, and no pod waits for a node. The NodePool's
// disruption budget of 0 holds voluntary methods, not repair; the two
// healthy nodes stay.
func TestRepairWithinTheBudget(t *testing.T) {
	t.Parallel()
	s := start(t, setup{replicas: 5, budget: "0", instanceTypes: []string{"m6i.2xlarge"}, repairBudget: ptr.To(1), pending: pendingBound,
		nodePool: func(np *v1.NodePool) {
			np.Annotations = map[string]string{v1.RepairBudgetAnnotationKey: "1", v1.RepairMaxUnhealthyAnnotationKey: "60%"}
			np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never)
		}})
	old := claimNames(s.claims())
	repaired := map[string]bool{}
	s.g.Eventually(func(g gomega.Gomega) {
		for name := range old {
			nc := s.guard.Last(name)
			g.Expect(nc).NotTo(gomega.BeNil())
			if nc.DeletionTimestamp == nil {
				continue
			}
			reason := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason)
			g.Expect(reason).NotTo(gomega.BeNil(), "nodeclaim %s deleted without a reason", name)
			g.Expect(reason.Reason).To(gomega.Equal(string(v1.DisruptionReasonUnhealthy)), "nodeclaim %s", name)
			repaired[name] = true
		}
		g.Expect(repaired).To(gomega.HaveLen(3))
	}).WithTimeout(kubeletStopAt + 3*time.Minute).Should(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.running()).To(gomega.HaveLen(5))
		claims := s.claims()
		g.Expect(claims).To(gomega.HaveLen(5))
		kept := 0
		for _, nc := range claims {
			g.Expect(repaired).NotTo(gomega.HaveKey(nc.Name))
			if old[nc.Name] {
				kept++
			}
		}
		g.Expect(kept).To(gomega.Equal(2), "the two healthy nodes stay")
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	// Pre-spun: the i-th repair's node is deleted only once i+1
	// replacements have initialized.
	initialized, deleting := 0, 0
	for _, e := range s.guard.History() {
		t.Logf("%s nodeclaim %s %s", e.At.Format("15:04:05.000"), e.Name, e.Kind)
		switch {
		case e.Kind == invariants.Initialized && !old[e.Name]:
			initialized++
		case e.Kind == invariants.Deleting && repaired[e.Name]:
			deleting++
			if initialized < deleting {
				t.Errorf("nodeclaim %s deleted at %s with %d replacement(s) initialized, want %d: repair replaces before it drains",
					e.Name, e.At.Format(time.RFC3339Nano), initialized, deleting)
			}
		}
	}
	for name := range repaired {
		// Drained at once: the node is broken, as the reference's repair.
		if _, ok := drain.TerminationTimestamp(s.guard.Last(name)); !ok {
			t.Errorf("nodeclaim %s repaired without a drain deadline", name)
		}
	}
	s.expectEvent(repaired, "DisruptionLaunching", "Repair (Unhealthy): launching replacement")
	s.expectEvent(repaired, "NodeRepairBlocked", "repair budget 1 (1) of nodepool "+s.np.Name+" is in use")
}
