//go:build e2e

package provisioning

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

var cluster *test.Cluster

// metricsURL is where the controller serves Prometheus metrics.
var metricsURL string

func TestMain(m *testing.M) {
	profile, _ := filepath.Abs("testdata/cloud-profile.yaml")
	os.Exit(test.MainWithCapstan(m, test.CapstanOptions{Args: func(*test.Cluster) []string {
		return []string{"--cloud-profile=" + profile, "--batch-idle-duration=500ms", "--batch-max-duration=2s",
			"--scheduler-names=default-scheduler," + test.SecondSchedulerName}
	}}, func(c *test.Cluster, metrics string) { cluster, metricsURL = c, metrics }))
}
