//go:build e2e

package helm

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

// The controller is not started here, as test.MainWithCapstan would, but
// by the test: with the chart's ServiceAccount, once the chart is in.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	c, err := test.StartCluster(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	cluster = c
	code := m.Run()
	if code != 0 {
		if data, err := os.ReadFile(filepath.Join(c.Logs(), "capstan.log")); err == nil {
			lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
			fmt.Fprintf(os.Stderr, "last lines of the capstan log:\n%s\n", strings.Join(lines[max(0, len(lines)-100):], "\n"))
		}
	}
	return code
}
