//go:build e2e

package disruption

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/test/parity"
)

// The drift scenario through `capstan simulate` ends with the same nodes
// as on the cluster: the same manifests, the NodePool's edit timed with
// simulate.capstan.dev/apply-at, the controller's cloud profile and
// disruption timings.
func TestDriftSimulateAgreesWithTheCluster(t *testing.T) {
	t.Parallel()
	const replicas = 2
	s := start(t, setup{replicas: replicas, budget: "1", instanceTypes: []string{"m5.xlarge"}})
	before := s.np.DeepCopy()
	s.requireTypes("m5.2xlarge")
	s.g.Eventually(func(g gomega.Gomega) {
		claims := s.claims()
		g.Expect(claims).To(gomega.HaveLen(replicas))
		for _, nc := range claims {
			g.Expect(nc.DeletionTimestamp).To(gomega.BeNil())
			g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.LabelInstanceType, "m5.2xlarge"))
		}
		g.Expect(s.running()).To(gomega.HaveLen(replicas))
	}).WithTimeout(150 * time.Second).Should(gomega.Succeed())
	var inCluster []string
	for _, nc := range s.claims() {
		inCluster = append(inCluster, nc.Labels[v1.LabelInstanceType]+"/"+nc.Labels[v1.CapacityTypeLabelKey])
	}

	// The scenario as simulate reads it: its SimNodeClass, its NodePool as
	// created and its Deployment at the start, the NodePool edited to
	// m5.2xlarge at 5m.
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	origin := clk.Now()
	script, err := parity.NewScript(clk)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	class := &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: before.Spec.Template.Spec.NodeClassRef.Name}}
	s.g.Expect(script.Apply(class, before, s.deploy)).To(gomega.Succeed())
	clk.Step(5 * time.Minute)
	edited := before.DeepCopy()
	edited.Spec.Template.Spec.Requirements[0].Values = []string{"m5.2xlarge"}
	s.g.Expect(script.Apply(edited)).To(gomega.Succeed())
	result, err := parity.Simulate(context.Background(), script, origin, controllerArgs(), 30*time.Minute, t.TempDir())
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	var simulated []string
	drifted := 0
	for _, n := range result.Nodes {
		if n.DeletedAt == "" {
			simulated = append(simulated, n.InstanceType+"/"+n.CapacityType)
		} else if n.DeletionReason == "Drifted" {
			drifted++
		}
	}
	slices.Sort(inCluster)
	slices.Sort(simulated)
	s.g.Expect(simulated).To(gomega.Equal(inCluster))
	s.g.Expect(drifted).To(gomega.Equal(replicas), "simulate replaced every drifted node")
}
