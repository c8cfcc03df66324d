package gangrelease

import (
	"os"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

var env *test.Environment

func TestMain(m *testing.M) {
	os.Exit(test.MainWithEnvironment(m, func(e *test.Environment) { env = e }))
}
