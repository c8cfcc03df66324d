//go:build e2e

package security

import (
	"os"
	"strings"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

var (
	cluster *test.Cluster
	// base is the controller's https address.
	base string
)

func TestMain(m *testing.M) {
	os.Exit(test.MainWithCapstan(m, test.CapstanOptions{Args: func(*test.Cluster) []string {
		return []string{"--metrics-secure", "--metrics-cert-dir=" + os.TempDir() + "/capstan-e2e-security-certs"}
	}}, func(c *test.Cluster, metrics string) {
		cluster = c
		base = "https://" + strings.TrimSuffix(strings.TrimPrefix(metrics, "http://"), "/metrics")
	}))
}
