package provisioner

import (
	"os"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

// env is the real kube-apiserver the package's controller tests share.
// The provisioner solves for every pending pod of the cluster, so each
// of those tests starts from, and leaves, a cluster without NodePools,
// NodeClaims or pods (harness.reset); they must not run in parallel.
var env *test.Environment

func TestMain(m *testing.M) {
	os.Exit(test.MainWithEnvironment(m, func(e *test.Environment) { env = e }))
}
