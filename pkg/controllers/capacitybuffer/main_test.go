package capacitybuffer

import (
	"os"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

// env is the real kube-apiserver the package's tests share.
var env *test.Environment

func TestMain(m *testing.M) {
	os.Exit(test.MainWithEnvironment(m, func(e *test.Environment) { env = e }))
}
