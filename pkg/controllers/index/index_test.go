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
	pod := test.Pod("default", func(p *corev1.Pod) { p.Spec.NodeName = node.Name })
	g.Expect(env.Client.Create(ctx, pod)).To(gomega.Succeed())
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
		found, err := NodeOf(ctx, mgr.GetClient(), nc)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(found).NotTo(gomega.BeNil())
		g.Expect(found.Name).To(gomega.Equal(node.Name))
		pods := &corev1.PodList{}
		g.Expect(mgr.GetClient().List(ctx, pods, client.MatchingFields{PodNode: node.Name})).To(gomega.Succeed())
		g.Expect(pods.Items).To(gomega.HaveLen(1))
		g.Expect(pods.Items[0].Name).To(gomega.Equal(pod.Name))
	}).Should(gomega.Succeed())
	for name, nc := range map[string]*v1.NodeClaim{"not launched": test.NodeClaim(), "no node": test.NodeClaim(func(nc *v1.NodeClaim) { nc.Status.ProviderID = "sim://index/none" })} {
		if found, err := NodeOf(ctx, mgr.GetClient(), nc); err != nil || found != nil {
			t.Errorf("%s: NodeOf = %v, %v; want none", name, found, err)
		}
	}
}
