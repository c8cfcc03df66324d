//go:build e2e

package batch

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

var cluster *test.Cluster

// TestMain runs Kueue's manager next to the controller, with the queues
// of testdata/kueue.yaml but its per-namespace LocalQueue.
func TestMain(m *testing.M) {
	os.Exit(test.MainWithCapstan(m, test.CapstanOptions{
		Setup: func(c *test.Cluster) error {
			if err := c.StartKueue(context.Background()); err != nil {
				return err
			}
			return createQueues(c)
		},
		Args: func(*test.Cluster) []string { return controllerArgs() },
	}, func(c *test.Cluster, _ string) { cluster = c }))
}

// controllerArgs start capstan with the suite's cloud and quick batches.
func controllerArgs() []string {
	profile, _ := filepath.Abs("testdata/cloud-profile.yaml")
	return []string{"--cloud-profile=" + profile, "--batch-idle-duration=500ms", "--batch-max-duration=2s"}
}
