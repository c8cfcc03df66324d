//go:build e2e

package faults

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/test/invariants"
	"github.com/capstan-dev/capstan/test/parity"
)

// kube-apiserver restarted mid-consolidation: three on-demand m4.xlarge
// nodes, one pod each; the Deployment scales to two (one node empties)
// and the NodePool now allows m4.large too (the other two are worth
// replacing by cheaper ones). Once a replacement is launching and the node
// it replaces is tainted, the API server is stopped and started again,
// etcd keeping everything. kube-scheduler, kube-controller-manager, kwok,
// the controller and the invariant checker reconnect by themselves; the
// interrupted command finishes or rolls back and consolidation ends with
// two m4.large nodes, the PDB and the budget held throughout and nothing
// leaked.
//
// Not parallel: the package's scenarios share the one API server, which
// this one takes away. A test that does not call t.Parallel runs alone,
// while the parallel ones wait.
func TestAPIServerRestartDuringConsolidation(t *testing.T) {
	const before, after = 3, 2
	s := start(t, setup{workloads: []workload{{name: "restart", replicas: before}}, budget: 1, consolidate: true,
		instanceTypes: []string{"m4.xlarge"}, capacityTypes: []string{v1.CapacityTypeOnDemand}, minAvailable: ptr.To[int32](1)})
	old := s.initial
	ctx := context.Background()
	d := s.deploy["restart"]
	scale := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To[int32](after)
	s.g.Expect(cluster.Client.Patch(ctx, d, scale)).To(gomega.Succeed())
	s.parity.Apply(t, d)
	// Unlike requireTypes, keep the capacity-type requirement: a spot
	// replacement would be another consolidation than the one under test.
	np := &v1.NodePool{}
	s.g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(s.np), np)).To(gomega.Succeed())
	widen := client.MergeFrom(np.DeepCopy())
	for i := range np.Spec.Template.Spec.Requirements {
		if np.Spec.Template.Spec.Requirements[i].Key == v1.LabelInstanceType {
			np.Spec.Template.Spec.Requirements[i].Values = []string{"m4.large", "m4.xlarge"}
		}
	}
	s.g.Expect(cluster.Client.Patch(ctx, np, widen)).To(gomega.Succeed())
	s.parity.Apply(t, np)

	// A replacement command in flight: its NodeClaim not yet initialized,
	// the node it replaces tainted.
	var victim, replacement string
	s.g.Eventually(func() bool {
		victim, replacement = "", ""
		claims := s.claims()
		for i := range claims {
			if !old[claims[i].Name] && !meta.IsStatusConditionTrue(claims[i].Status.Conditions, v1.ConditionTypeInitialized) {
				replacement = claims[i].Name
			} else if old[claims[i].Name] && claims[i].DeletionTimestamp == nil && disrupted(node(&claims[i])) {
				victim = claims[i].Name
			}
		}
		return victim != "" && replacement != ""
	}).WithTimeout(2*time.Minute).WithPolling(100*time.Millisecond).Should(gomega.BeTrue(), "no replacement in flight: %s", describe(s.claims()))
	t.Logf("restarting kube-apiserver while %s is tainted and %s replaces it", victim, replacement)
	// The restart takes 5-7 s. One over about 15 s would break the
	// scenario: kwok renews node leases every 5 s and
	// kube-controller-manager gives them 20 s, then marks the nodes and
	// their pods not Ready, and kwok never makes those pods Ready again.
	stopped := time.Now()
	s.g.Expect(cluster.RestartAPIServer(ctx)).To(gomega.Succeed())
	down := time.Since(stopped)
	t.Logf("kube-apiserver ready again after %s", down.Round(100*time.Millisecond))

	// The leader renews its Lease every 2 s and gives up 10 s after the
	// last renewal, so a restart that long makes it exit, by design; a
	// Deployment would start it again, and so does this loop.
	restarts := 0
	s.g.Eventually(func(g gomega.Gomega) {
		if exited, err := cluster.Exited("capstan"); exited {
			t.Logf("capstan exited (%v); starting it again", err)
			restarts++
			_, err := cluster.StartCapstan(controllerArgs()...)
			g.Expect(err).NotTo(gomega.HaveOccurred())
		}
		for _, nc := range s.claims() {
			g.Expect(old).NotTo(gomega.HaveKey(nc.Name), "old nodeclaim %s still there after consolidation", nc.Name)
			g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(v1.LabelInstanceType, "m4.large"))
		}
	}).WithTimeout(3*time.Minute).Should(gomega.Succeed(), s.dump)
	s.settled(after, time.Minute)
	outcome := "rolled back (replacement " + replacement + " deleted)"
	if last := s.guard.Last(replacement); last != nil && last.DeletionTimestamp == nil {
		outcome = "finished (replacement " + replacement + " kept)"
	}
	s.leakFree()
	// The guard may miss a deletion's start. The restarted server's watch
	// cache for NodeClaims is ready only some seconds after it answers
	// requests, the guard's watch waits for it and, its resource version
	// then too old, lists again: a NodeClaim deleted and gone meanwhile is
	// only seen gone. Gone counts those too.
	gone := 0
	for _, e := range s.guard.History() {
		if e.Kind == invariants.Gone {
			gone++
		}
	}
	s.summary(fmt.Sprintf("; gone %d; kube-apiserver down %s; capstan restarted %d times; interrupted command %s",
		gone, down.Round(100*time.Millisecond), restarts, outcome))
	s.checkParity(parity.CrashRollback)
}
