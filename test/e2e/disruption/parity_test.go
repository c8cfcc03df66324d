//go:build e2e

package disruption

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/simulator"
	"github.com/capstan-dev/capstan/pkg/test"
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

	dir := t.TempDir()
	writeManifests(t, s.g, filepath.Join(dir, "manifests.yaml"), before, s.deploy)
	root, err := test.ModuleRoot()
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	out, err := exec.CommandContext(context.Background(), filepath.Join(root, "bin", "capstan"), "simulate", "-o", "json", "--duration", "30m",
		"--cloud-profile", filepath.Join(root, "test/e2e/disruption/testdata/cloud-profile.yaml"),
		"--batch-idle-duration=500ms", "--batch-max-duration=2s",
		"--disruption-poll-interval="+pollInterval.String(), "--disruption-validation-delay="+validationDelay.String(),
		"-f", dir).Output()
	s.g.Expect(err).NotTo(gomega.HaveOccurred(), "capstan simulate: %s", out)
	var result simulator.Result
	s.g.Expect(json.Unmarshal(out, &result)).To(gomega.Succeed())
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

// writeManifests writes the scenario as simulate reads it: its
// SimNodeClass, its NodePool as created, the NodePool edited to
// m5.2xlarge at 5m, and its Deployment.
func writeManifests(t *testing.T, g gomega.Gomega, path string, np *v1.NodePool, deploy *appsv1.Deployment) {
	t.Helper()
	class := &simv1alpha1.SimNodeClass{TypeMeta: metav1.TypeMeta{APIVersion: simv1alpha1.SchemeGroupVersion.String(), Kind: "SimNodeClass"},
		ObjectMeta: metav1.ObjectMeta{Name: np.Spec.Template.Spec.NodeClassRef.Name}}
	pool := func(types []string, annotations map[string]string) *v1.NodePool {
		p := &v1.NodePool{TypeMeta: metav1.TypeMeta{APIVersion: v1.SchemeGroupVersion.String(), Kind: "NodePool"},
			ObjectMeta: metav1.ObjectMeta{Name: np.Name, Annotations: annotations}, Spec: *np.Spec.DeepCopy()}
		p.Spec.Template.Spec.Requirements[0].Values = types
		return p
	}
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: deploy.Name, Namespace: deploy.Namespace}, Spec: *deploy.Spec.DeepCopy()}
	var docs []string
	for _, o := range []any{class, pool([]string{"m5.xlarge"}, nil), pool([]string{"m5.2xlarge"}, map[string]string{manifests.ApplyAtAnnotation: "5m"}), d} {
		b, err := yaml.Marshal(o)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		docs = append(docs, string(b))
	}
	g.Expect(os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o600)).To(gomega.Succeed())
}
