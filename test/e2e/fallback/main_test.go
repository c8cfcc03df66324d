//go:build e2e

package fallback

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

var cluster *test.Cluster

// TestMain runs the controller with long batch windows (idle 30 s, max
// 60 s), which a failed launch must not wait for.
func TestMain(m *testing.M) {
	os.Exit(test.MainWithCapstan(m, test.CapstanOptions{Args: func(*test.Cluster) []string { return controllerArgs() }},
		func(c *test.Cluster, _ string) { cluster = c }))
}

// controllerArgs start capstan with the suite's cloud and long batch
// windows. The parity checks run simulate with the same.
func controllerArgs() []string {
	profile, _ := filepath.Abs("testdata/cloud-profile.yaml")
	return []string{"--cloud-profile=" + profile, "--batch-idle-duration=30s", "--batch-max-duration=60s"}
}
