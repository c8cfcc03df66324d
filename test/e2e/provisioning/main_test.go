//go:build e2e

package provisioning

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/pkg/test"
)

var cluster *test.Cluster

// metricsURL is where the controller serves Prometheus metrics.
var metricsURL string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	c, err := test.StartCluster(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cluster = c
	defer func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	root, err := test.ModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bin := filepath.Join(root, "bin", "capstan")
	if _, err := os.Stat(bin); err != nil {
		fmt.Fprintf(os.Stderr, "capstan binary missing (run `make build`), %v\n", err)
		return 1
	}
	// Capstan runs as its own user with only config/rbac's ClusterRole
	// (and leader election on), so a missing permission fails the suite.
	kubeconfig, err := capstanUser(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	metricsAddr := l.Addr().String()
	_ = l.Close()
	metricsURL = "http://" + metricsAddr + "/metrics"
	profile, _ := filepath.Abs("testdata/cloud-profile.yaml")
	if err := c.StartProcess("capstan", bin, []string{"KUBECONFIG=" + kubeconfig}, "controller",
		"--cloud-profile="+profile, "--sim-state="+filepath.Join(c.Root, "sim-state.json"),
		"--batch-idle-duration=500ms", "--batch-max-duration=2s",
		"--leader-elect=true", "--metrics-bind-address="+metricsAddr, "--health-probe-bind-address=0",
		"--scheduler-names=default-scheduler,"+test.SecondSchedulerName,
	); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "component logs: %s\n", c.Logs())
	}
	return code
}

func capstanUser(c *test.Cluster) (string, error) {
	ctx := context.Background()
	role, err := test.ReadManifests("config/rbac/role.yaml")
	if err != nil {
		return "", err
	}
	for _, m := range role {
		if err := c.Client.Create(ctx, m.Object); err != nil {
			return "", fmt.Errorf("creating %s, %w", m.Object.GetName(), err)
		}
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "capstan"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "capstan"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "capstan"}},
	}
	if err := c.Client.Create(ctx, binding); err != nil {
		return "", fmt.Errorf("binding capstan's role, %w", err)
	}
	return c.UserKubeconfig("capstan")
}
