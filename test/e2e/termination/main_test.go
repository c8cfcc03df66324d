//go:build e2e

package termination

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

var cluster *test.Cluster

// controllerArgs start capstan: quick batches, quick garbage collection,
// and the crash-injection file.
func controllerArgs() []string {
	profile, _ := filepath.Abs("testdata/cloud-profile.yaml")
	return []string{"--cloud-profile=" + profile, "--batch-idle-duration=500ms", "--batch-max-duration=2s",
		"--gc-interval=2s", "--gc-grace=5s", "--test-crash-after-launch-file=" + crashFile()}
}

func crashFile() string { return filepath.Join(cluster.Root, "crash-after-launch") }

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
	if _, err := c.StartCapstan(controllerArgs()...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "component logs: %s\n", c.Logs())
	}
	return code
}
