package ec2nodeclass

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/capstan-dev/capstan/pkg/test"
)

// env is the real kube-apiserver the package's tests share.
var env *test.Environment

func TestMain(m *testing.M) {
	os.Exit(test.MainWithEnvironment(m, func(e *test.Environment) { env = e }))
}

func startManager(t *testing.T, register func(manager.Manager) error) manager.Manager {
	t.Helper()
	return test.StartManager(t, env, register)
}
