//go:build e2e

package disruption

import (
	"testing"
	"time"

	"github.com/onsi/gomega"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// balanced puts a NodePool under consolidationPolicy Balanced,
// consolidating at once.
func balanced(np *v1.NodePool) {
	np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyBalanced
	np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("0s")
}

// scoredWidening starts a Balanced scenario of one pod on an on-demand
// from, widens its NodePool to allow to as well and waits for the event
// (reason) saying the move's score; it returns the scenario and its
// NodeClaims before the move.
func scoredWidening(t *testing.T, from, to, reason, score string, threshold string) (*scenario, map[string]bool) {
	t.Helper()
	s := start(t, setup{replicas: 1, budget: "1", shared: true, instanceTypes: []string{from},
		capacityTypes: []string{v1.CapacityTypeOnDemand}, nodePool: func(np *v1.NodePool) {
			balanced(np)
			if threshold != "" {
				np.Annotations = map[string]string{v1.ConsolidationThresholdAnnotationKey: threshold}
			}
		}})
	claims := claimNames(s.claims())
	s.requireTypes(from, to)
	s.expectEvent(claims, reason, score)
	return s, claims
}

// One pod on an on-demand m5.xlarge (0.192 per hour); widened to allow a
// c5.xlarge (0.170), the replace would save 11.5% of the pool's cost for
// all of its disruption: score 0.11. The node stays, and the
// ConsolidationRejected event says the score. The NodePool's threshold is
// 0.99 (capstan.dev/consolidation-threshold), not the default 0.5: the
// other scenarios' nodes are consolidated beside it, and a multi-node
// move that takes this node with theirs credits this pool with a share of
// their savings as well (as the reference splits a cross-pool move's
// savings by cost), which could reach 0.5 but not 0.99 here.
func TestBalancedSkipsASmallSaving(t *testing.T) {
	t.Parallel()
	s, claims := scoredWidening(t, "m5.xlarge", "c5.xlarge", "ConsolidationRejected", "score 0.11 < threshold 0.99 (k: 1.01, savings 11.5%, disruption 100.0%)", "0.99")
	s.untouched(claims)
}

// One pod on an on-demand m5.2xlarge (0.384 per hour); widened to allow
// an m5.large (0.096), the replace saves 75% of the pool's cost for all
// of its disruption: score 0.75, taken under the default threshold. The
// ConsolidationApproved event says the score (higher when a multi-node
// move takes the node with other scenarios' nodes and credits it a share
// of their savings, so only the threshold is matched), and the pod ends
// on an m5.large.
func TestBalancedTakesALargeSaving(t *testing.T) {
	t.Parallel()
	s, claims := scoredWidening(t, "m5.2xlarge", "m5.large", "ConsolidationApproved", " >= threshold 0.50 (k: 2, ", "")
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.running()).To(gomega.HaveLen(1))
		got := s.claims()
		g.Expect(got).To(gomega.HaveLen(1))
		g.Expect(claims).NotTo(gomega.HaveKey(got[0].Name), "the m5.2xlarge is still there")
		g.Expect(got[0].Labels).To(gomega.HaveKeyWithValue(v1.LabelInstanceType, "m5.large"))
	}).WithTimeout(90 * time.Second).Should(gomega.Succeed())
}
