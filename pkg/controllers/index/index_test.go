package index

import (
	"context"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The indexes find Nodes and NodeClaims by provider id and NodeClaims by
// node name through the manager's cache.
func TestRegister(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	mgr := test.StartManager(t, env, func(mgr manager.Manager) error { return Register(ctx, mgr) })
	node := test.KwokNode()
	node.Spec.ProviderID = "sim://index/i-1"
	g.Expect(env.Client.Create(ctx, node)).To(gomega.Succeed())
	nc := test.NodeClaim()
	g.Expect(env.Client.Create(ctx, nc)).To(gomega.Succeed())
	nc.Status.ProviderID, nc.Status.NodeName = node.Spec.ProviderID, node.Name
	g.Expect(env.Client.Status().Update(ctx, nc)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		nodes := &corev1.NodeList{}
		g.Expect(mgr.GetClient().List(ctx, nodes, client.MatchingFields{ProviderID: node.Spec.ProviderID})).To(gomega.Succeed())
		g.Expect(nodes.Items).To(gomega.HaveLen(1))
		for field, value := range map[string]string{ProviderID: node.Spec.ProviderID, NodeName: node.Name} {
			claims := &v1.NodeClaimList{}
			g.Expect(mgr.GetClient().List(ctx, claims, client.MatchingFields{field: value})).To(gomega.Succeed())
			g.Expect(claims.Items).To(gomega.HaveLen(1))
			g.Expect(claims.Items[0].Name).To(gomega.Equal(nc.Name))
		}
	}).Should(gomega.Succeed())
}
