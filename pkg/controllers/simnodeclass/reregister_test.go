package simnodeclass

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// recorder records the NodeClaims Reregister was asked about.
type recorder struct {
	mu    sync.Mutex
	names []string
}

func (r *recorder) Reregister(_ context.Context, nc *v1.NodeClaim) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, nc.Name)
	return nil
}

// Only launched NodeClaims whose Node has not registered, and which are
// not being deleted, have their Node registered again.
func TestReregistration(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := env.Client
	launched := metav1.Condition{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: v1.ConditionTypeLaunched, LastTransitionTime: metav1.Now()}
	claim := func(status v1.NodeClaimStatus, finalize bool) *v1.NodeClaim {
		nc := test.NodeClaim()
		if finalize {
			nc.Finalizers = []string{v1.TerminationFinalizer}
		}
		g.Expect(c.Create(ctx, nc)).To(gomega.Succeed())
		nc.Status = status
		g.Expect(c.Status().Update(ctx, nc)).To(gomega.Succeed())
		t.Cleanup(func() {
			nc.Finalizers = nil
			_ = c.Update(ctx, nc)
			_ = c.Delete(ctx, nc)
		})
		return nc
	}
	unregistered := claim(v1.NodeClaimStatus{ProviderID: "sim://a/i-1", Conditions: []metav1.Condition{launched}}, false)
	registered := claim(v1.NodeClaimStatus{ProviderID: "sim://a/i-2", NodeName: "sim-2", Conditions: []metav1.Condition{launched}}, false)
	unlaunched := claim(v1.NodeClaimStatus{}, false)
	deleting := claim(v1.NodeClaimStatus{ProviderID: "sim://a/i-3", Conditions: []metav1.Condition{launched}}, true)
	g.Expect(c.Delete(ctx, deleting)).To(gomega.Succeed())

	r := &recorder{}
	g.Expect(NewReregistration(ReregistrationDeps{Reader: c, Cloud: r}).Start(ctx)).To(gomega.Succeed())
	g.Expect(slices.Contains(r.names, unregistered.Name)).To(gomega.BeTrue(), "asked about %v", r.names)
	for _, nc := range []*v1.NodeClaim{registered, unlaunched, deleting} {
		g.Expect(r.names).NotTo(gomega.ContainElement(nc.Name), "only launched, unregistered NodeClaims not being deleted")
	}
}
