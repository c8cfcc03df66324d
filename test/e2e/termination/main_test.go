//go:build e2e

package termination

import (
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
	os.Exit(test.MainWithCapstan(m, test.CapstanOptions{Args: func(c *test.Cluster) []string {
		cluster = c
		return controllerArgs()
	}}, func(c *test.Cluster, _ string) { cluster = c }))
}
