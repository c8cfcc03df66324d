//go:build e2e

package provisioning

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/simulator"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The same manifests applied to the cluster and given to `capstan
// simulate` (with the controller's cloud profile) end with the same
// nodes: as many, of the same instance and capacity types.
func TestSimulateAgreesWithTheCluster(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	manifests, err := test.ReadManifests("test/e2e/provisioning/testdata/parity/manifests.yaml")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, m := range manifests {
		g.Expect(cluster.Client.Create(ctx, m.Object)).To(gomega.Succeed(), "creating %s %s", m.Object.GetKind(), m.Object.GetName())
	}
	t.Cleanup(func() {
		for _, m := range slices.Backward(manifests) {
			_ = cluster.Client.Delete(ctx, m.Object)
		}
	})
	np := &v1.NodePool{}
	np.Name = "parity"
	g.Eventually(func(g gomega.Gomega) {
		pods := &corev1.PodList{}
		g.Expect(cluster.Client.List(ctx, pods, client.InNamespace("parity"))).To(gomega.Succeed())
		g.Expect(pods.Items).To(gomega.HaveLen(3))
		for _, p := range pods.Items {
			g.Expect(p.Status.Phase).To(gomega.Equal(corev1.PodRunning), "pod %s", p.Name)
		}
	}).WithTimeout(90 * time.Second).Should(gomega.Succeed())
	var inCluster []string
	for _, nc := range nodeClaimsOf(g, np) {
		if nc.DeletionTimestamp == nil {
			inCluster = append(inCluster, nc.Labels[v1.LabelInstanceType]+"/"+nc.Labels[v1.CapacityTypeLabelKey])
		}
	}

	root, err := test.ModuleRoot()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	out, err := exec.CommandContext(ctx, filepath.Join(root, "bin", "capstan"), "simulate", "-o", "json", "--duration", "10m",
		"--cloud-profile", filepath.Join(root, "test/e2e/provisioning/testdata/cloud-profile.yaml"),
		"-f", filepath.Join(root, "test/e2e/provisioning/testdata/parity")).Output()
	g.Expect(err).NotTo(gomega.HaveOccurred(), "capstan simulate: %s", out)
	var result simulator.Result
	g.Expect(json.Unmarshal(out, &result)).To(gomega.Succeed())
	var simulated []string
	for _, n := range result.Nodes {
		if n.DeletedAt == "" {
			simulated = append(simulated, n.InstanceType+"/"+n.CapacityType)
		}
	}
	slices.Sort(inCluster)
	slices.Sort(simulated)
	g.Expect(simulated).To(gomega.Equal(inCluster))
	g.Expect(simulated).To(gomega.Equal([]string{"c4.xlarge/on-demand", "c4.xlarge/on-demand", "c4.xlarge/on-demand"}))
}
