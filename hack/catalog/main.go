package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
)

// defaultOut is the embedded file, relative to the module root.
const defaultOut = "pkg/cloudprovider/catalog/instancetypes.json"

func main() {
	out := flag.String("out", defaultOut, "file to write")
	check := flag.Bool("check", false, "only verify that the file is up to date")
	flag.Parse()
	if err := run(*out, *check); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run writes the generated catalog to path or, with check, reports a
// stale or missing file without touching it (for CI).
func run(path string, check bool) error {
	want, err := catalog.Generate()
	if err != nil {
		return err
	}
	if !check {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			return fmt.Errorf("writing %s, %w", path, err)
		}
		return nil
	}
	got, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("checking %s, %w", path, err)
	}
	if !bytes.Equal(got, want) {
		return errors.New(path + " is stale; run go run ./hack/catalog")
	}
	return nil
}
