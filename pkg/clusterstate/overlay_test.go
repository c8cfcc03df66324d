package clusterstate_test

import (
	"context"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The snapshot every decision reads, and the instance types explain
// reads, carry the NodeOverlays' prices.
func TestSnapshotAppliesNodeOverlays(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	np := test.NodePool()
	g.Expect(env.Client.Create(ctx, np)).To(gomega.Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, np) })
	o := test.NodeOverlay("snapshot-price", func(o *v1alpha1.NodeOverlay) {
		o.Spec.Requirements = []v1alpha1.NodeSelectorRequirement{{Key: v1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{np.Name}}}
		o.Spec.Price = new("7.5")
	})
	g.Expect(env.Client.Create(ctx, o)).To(gomega.Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, o) })
	cloud := fake.New(test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8, Price: 1}))
	c := &clusterstate.Cluster{Client: env.Client, Cloud: cloud, SchedulerNames: []string{corev1.DefaultSchedulerName}}

	s, err := c.Snapshot(ctx)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, of := range s.Input.InstanceTypes[np.Name][0].Offerings {
		g.Expect(of.Price).To(gomega.Equal(7.5), "offering %s", of)
	}
	its, _ := c.KnownInstanceTypes(np.Name)
	g.Expect(its[0].Offerings[0].Price).To(gomega.Equal(7.5))
}
