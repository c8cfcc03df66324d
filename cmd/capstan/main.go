// Command capstan is the Capstan node autoscaler: `capstan controller` runs
// it against a cluster, `capstan simulate` runs it in virtual time with no
// cluster, `capstan explain` says why, `capstan version` prints the build.
package main

import (
	"fmt"
	"os"

	"github.com/capstan-dev/capstan/cmd/capstan/app"
)

func main() {
	if err := app.NewCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
