//go:build e2e

package reservations

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
	crd, err := test.ReadManifests("test/e2e/reservations/testdata/openmodel-crd.yaml")
	if err != nil || len(crd) != 1 {
		fmt.Fprintln(os.Stderr, "reading the OpenModel CRD", err)
		return 1
	}
	if err := c.Client.Create(context.Background(), crd[0].Object); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	profile, _ := filepath.Abs("testdata/cloud-profile.yaml")
	metricsURL, err = c.StartCapstan("--cloud-profile="+profile, "--batch-idle-duration=500ms", "--batch-max-duration=2s")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "component logs: %s\n", c.Logs())
	}
	return code
}
