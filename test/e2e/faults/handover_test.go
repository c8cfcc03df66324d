//go:build e2e

package faults

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/test/parity"
)

// Leader handover: a standby controller runs beside the leader (leader
// election on); the leader is SIGKILLed with a drift command in flight and
// the standby takes the Lease and carries on. No command runs twice: no
// old node gets a second replacement launched for it, drift then replaces
// every node once, the PDB and the budget hold and nothing leaks. Not
// parallel: its standby must not be what another scenario's crash kills.
func TestLeaderHandover(t *testing.T) {
	const replicas = 2
	s := start(t, setup{workloads: []workload{{name: "handover", replicas: replicas}}, budget: 1,
		instanceTypes: []string{"m6i.large"}, minAvailable: ptr.To[int32](replicas - 1)})
	_, err := cluster.StartCapstan(controllerArgs()...)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	old := s.initial
	s.requireTypes("m6i.xlarge")
	s.g.Eventually(func() bool {
		for _, nc := range s.claims() {
			if old[nc.Name] && nc.DeletionTimestamp == nil && disrupted(node(&nc)) {
				return true
			}
		}
		return false
	}).WithTimeout(90*time.Second).WithPolling(100*time.Millisecond).Should(gomega.BeTrue(), "no command in flight: %s", describe(s.claims()))
	down := crash(t, s.g, true)
	s.g.Eventually(func(g gomega.Gomega) {
		for _, nc := range s.claims() {
			g.Expect(old).NotTo(gomega.HaveKey(nc.Name), "old nodeclaim %s still there after drift", nc.Name)
			g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.LabelInstanceType, "m6i.xlarge"))
		}
	}).WithTimeout(2*time.Minute).Should(gomega.Succeed(), s.dump)
	s.settled(replicas, time.Minute)
	// Each old node's replacements, as the leaders announced them.
	events := &corev1.EventList{}
	s.g.Expect(cluster.Client.List(context.Background(), events, client.InNamespace(""))).To(gomega.Succeed())
	launched := map[string]map[string]bool{}
	for _, e := range events.Items {
		if e.Reason != "DisruptionLaunching" || !old[e.InvolvedObject.Name] {
			continue
		}
		replacement := e.Message[strings.LastIndex(e.Message, " ")+1:]
		if launched[e.InvolvedObject.Name] == nil {
			launched[e.InvolvedObject.Name] = map[string]bool{}
		}
		launched[e.InvolvedObject.Name][replacement] = true
	}
	for name, replacements := range launched {
		if len(replacements) > 1 {
			t.Errorf("nodeclaim %s got %d replacements launched for it (%v): a command ran twice", name, len(replacements), replacements)
		}
	}
	s.leakFree()
	s.summary("; leaderless " + down.Round(time.Second).String())
	s.checkParity(parity.CrashRollback)
}
