//go:build e2e

package reservations

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

var cluster *test.Cluster

// controller is the controller's metrics address, where it answers
// `capstan explain`.
var controller string

// TestMain installs a minimal OpenModel CRD before the controller starts,
// as llmaz would.
func TestMain(m *testing.M) {
	os.Exit(test.MainWithCapstan(m, test.CapstanOptions{
		Setup: func(c *test.Cluster) error {
			crd, err := test.ReadManifests("test/e2e/reservations/testdata/openmodel-crd.yaml")
			if err != nil || len(crd) != 1 {
				return fmt.Errorf("reading the OpenModel CRD (%d documents), %w", len(crd), err)
			}
			return c.Client.Create(context.Background(), crd[0].Object)
		},
		Args: func(*test.Cluster) []string { return controllerArgs() },
	}, func(c *test.Cluster, metrics string) {
		cluster, controller = c, strings.TrimSuffix(metrics, "/metrics")
	}))
}

// controllerArgs start capstan with the suite's cloud and quick batches.
// The parity checks run simulate with the same.
func controllerArgs() []string {
	profile, _ := filepath.Abs("testdata/cloud-profile.yaml")
	return []string{"--cloud-profile=" + profile, "--batch-idle-duration=500ms", "--batch-max-duration=2s"}
}
