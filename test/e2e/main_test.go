//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

// crashEnv makes the test binary start a cluster and exit without cleaning
// up, as a crashed test would; TestNoOrphanSurvivesACrash runs it.
const crashEnv = "CAPSTAN_E2E_CRASH_AFTER_START"

// cluster is shared by every test in the package; tests isolate themselves
// with a namespace each.
var cluster *test.Cluster

func TestMain(m *testing.M) {
	c, err := test.StartCluster(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.Getenv(crashEnv) != "" {
		fmt.Println(c.Root)
		os.Exit(3)
	}
	cluster = c
	code := m.Run()
	if err := cluster.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
