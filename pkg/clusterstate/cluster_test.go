package clusterstate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/test"
)

// Snapshot asks the cloud and remembers its answer; ReadOnlySnapshot
// answers from that memory and never asks, reporting a NodePool it has
// no instance types for as unusable, with why.
func TestReadOnlySnapshotNeverAsksTheCloud(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	np := test.NodePool()
	g.Expect(env.Client.Create(ctx, np)).To(gomega.Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, np) })
	cloud := fake.New(test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8}))
	c := &clusterstate.Cluster{Client: env.Client, Cloud: cloud, SchedulerNames: []string{corev1.DefaultSchedulerName}}

	before, err := c.ReadOnlySnapshot(ctx)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(before.NodePools).NotTo(gomega.HaveKey(np.Name))
	g.Expect(strings.Contains(before.Input.UnusableNodePools[np.Name], "no instance types known yet")).To(gomega.BeTrue(), "%v", before.Input.UnusableNodePools)
	g.Expect(cloud.GetInstanceTypesCalls).To(gomega.BeEmpty())

	_, err = c.Snapshot(ctx)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	asked := len(cloud.GetInstanceTypesCalls)
	g.Expect(asked).To(gomega.BeNumerically(">", 0))

	after, err := c.ReadOnlySnapshot(ctx)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(after.NodePools).To(gomega.HaveKey(np.Name))
	g.Expect(after.Input.InstanceTypes[np.Name]).To(gomega.HaveLen(1))
	g.Expect(cloud.GetInstanceTypesCalls).To(gomega.HaveLen(asked), "ReadOnlySnapshot asked the cloud")
	its, ok := c.KnownInstanceTypes(np.Name)
	g.Expect(ok).To(gomega.BeTrue())
	g.Expect(its[0].Name).To(gomega.Equal("m.large"))
}

// List reads every kind a snapshot and disruption need, PDBs included.
func TestListReadsPDBs(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	ns := test.Namespace(t, env.Client)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web-pdb", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	g.Expect(env.Client.Create(ctx, pdb)).To(gomega.Succeed())
	objs, err := clusterstate.List(ctx, env.Client, clusterstate.Sources{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	found := false
	for _, p := range objs.PDBs {
		found = found || (p.Namespace == ns && p.Name == "web-pdb")
	}
	g.Expect(found).To(gomega.BeTrue(), "PDBs %v", objs.PDBs)
}
