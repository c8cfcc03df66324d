package v1_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

// env is the real kube-apiserver every test in this package validates
// against; one per package keeps the suite fast.
var env *test.Environment

func TestMain(m *testing.M) {
	var err error
	env, err = test.StartEnvironment()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
