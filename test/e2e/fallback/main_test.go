//go:build e2e

package fallback

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

var cluster *test.Cluster

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
	profile, _ := filepath.Abs("testdata/cloud-profile.yaml")
	if err := c.StartProcess("capstan", bin, []string{"KUBECONFIG=" + c.Kubeconfig}, "controller",
		"--cloud-profile="+profile, "--sim-state="+filepath.Join(c.Root, "sim-state.json"),
		"--batch-idle-duration=30s", "--batch-max-duration=60s",
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
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
