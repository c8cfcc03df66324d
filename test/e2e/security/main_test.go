//go:build e2e

package security

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	certutil "k8s.io/client-go/util/cert"

	"github.com/capstan-dev/capstan/pkg/test"
)

var (
	cluster *test.Cluster
	// base is the controller's https address.
	base string
)

func TestMain(m *testing.M) {
	os.Exit(test.MainWithCapstan(m, test.CapstanOptions{
		Setup: writeCert,
		Args: func(c *test.Cluster) []string {
			return []string{"--metrics-secure", "--metrics-cert-dir=" + certDir(c)}
		},
	}, func(c *test.Cluster, metrics string) {
		cluster = c
		base = "https://" + strings.TrimSuffix(strings.TrimPrefix(metrics, "http://"), "/metrics")
	}))
}

// certDir holds the controller's serving certificate, under the cluster's
// root.
func certDir(c *test.Cluster) string { return filepath.Join(c.Root, "metrics-cert") }

// writeCert writes a self-signed serving certificate for --metrics-cert-dir,
// which the controller refuses when it is missing.
func writeCert(c *test.Cluster) error {
	crt, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", nil, nil)
	if err != nil {
		return fmt.Errorf("generating the metrics certificate, %w", err)
	}
	if err := os.MkdirAll(certDir(c), 0o700); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"tls.crt": crt, "tls.key": key} {
		if err := os.WriteFile(filepath.Join(certDir(c), name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
