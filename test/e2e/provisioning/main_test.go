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
	os.Exit(test.MainWithCapstan(m, test.CapstanOptions{Args: func(*test.Cluster) []string { return controllerArgs() }},
		func(c *test.Cluster, metrics string) { cluster, metricsURL = c, metrics }))
}

// controllerArgs start capstan: the suite's cloud, quick batches, the
// second scheduler's pods provisioned for too, and CapacityBuffers
// served (a scenario without a buffer sees no difference). The parity
// checks run simulate with the same.
func controllerArgs() []string {
	profile, _ := filepath.Abs("testdata/cloud-profile.yaml")
	return []string{"--cloud-profile=" + profile, "--batch-idle-duration=500ms", "--batch-max-duration=2s",
		"--scheduler-names=default-scheduler," + test.SecondSchedulerName, "--feature-gates=CapacityBuffer=true"}
}
