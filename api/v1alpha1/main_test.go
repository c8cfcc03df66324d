package v1alpha1_test

import (
	"os"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

// env is the real kube-apiserver every test in this package validates
// against.
var env *test.Environment

func TestMain(m *testing.M) {
	os.Exit(test.MainWithEnvironment(m, func(e *test.Environment) { env = e }))
}
