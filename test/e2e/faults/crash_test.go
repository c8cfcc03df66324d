//go:build e2e

package faults

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/test/parity"
)

// Capstan killed mid-command: drift (the NodePool narrowed to another
// instance type) has launched a replacement and tainted the old node, not
// yet deleted it, when the controller is SIGKILLed and restarted. The
// command either finishes or rolls back (the taint gone, the replacement
// deleted); either way drift then replaces every node, the PDB and the
// budget hold, no pod is lost and no instance leaks.
func TestKilledMidDisruption(t *testing.T) {
	t.Parallel()
	const replicas = 2
	s := start(t, setup{workloads: []workload{{name: "work", replicas: replicas}}, budget: 1,
		instanceTypes: []string{"m5.large"}, minAvailable: ptr.To[int32](replicas - 1)})
	old := s.initial
	s.requireTypes("m5.xlarge")
	var victim, replacement string
	s.g.Eventually(func() bool {
		claims := s.claims()
		for i := range claims {
			if !old[claims[i].Name] {
				replacement = claims[i].Name
			}
		}
		for i := range claims {
			if old[claims[i].Name] && claims[i].DeletionTimestamp == nil && disrupted(node(&claims[i])) {
				victim = claims[i].Name
			}
		}
		return victim != "" && replacement != ""
	}).WithTimeout(90*time.Second).WithPolling(100*time.Millisecond).Should(gomega.BeTrue(), "no command in flight: %s", describe(s.claims()))
	t.Logf("killing capstan while %s is tainted and %s replaces it", victim, replacement)
	down := crash(t, s.g, false)
	s.g.Eventually(func(g gomega.Gomega) {
		for _, nc := range s.claims() {
			g.Expect(old).NotTo(gomega.HaveKey(nc.Name), "old nodeclaim %s still there after drift", nc.Name)
			g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.LabelInstanceType, "m5.xlarge"))
		}
	}).WithTimeout(2*time.Minute).Should(gomega.Succeed(), s.dump)
	s.settled(replicas, time.Minute)
	outcome := "rolled back (replacement " + replacement + " deleted)"
	if s.guard.Last(replacement) != nil && s.guard.Last(replacement).DeletionTimestamp == nil {
		outcome = "finished (replacement " + replacement + " kept)"
	}
	s.leakFree()
	s.summary("; leaderless " + down.Round(time.Second).String() + "; interrupted command " + outcome)
	s.checkParity(parity.CrashRollback)
}
