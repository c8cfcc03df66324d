package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// module is the import path every package of the module starts with.
const module = "github.com/capstan-dev/capstan/"

// pkg is one package as `go list` sees it, its paths relative to the
// module.
type pkg struct {
	path    string
	imports []string
	deps    []string
}

// graph is the module's packages, listed once for all the tests.
var graph struct {
	once sync.Once
	root string
	pkgs map[string]*pkg
	err  error
}

// listed is the module's packages in api, config, pkg and cmd, their
// imports under both settings of the e2e build tag merged, and the
// module's root directory.
func listed(t *testing.T) (root string, pkgs map[string]*pkg) {
	t.Helper()
	graph.once.Do(func() { graph.root, graph.pkgs, graph.err = list() })
	if graph.err != nil {
		t.Fatal(graph.err)
	}
	return graph.root, graph.pkgs
}

func list() (root string, pkgs map[string]*pkg, err error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", nil, fmt.Errorf("finding the module, %w", err)
	}
	root = filepath.Dir(strings.TrimSpace(string(out)))
	pkgs = map[string]*pkg{}
	for _, tags := range []string{"", "e2e"} {
		cmd := exec.Command("go", "list", "-tags", tags, "-json=ImportPath,Imports,Deps", "./api/...", "./config/...", "./pkg/...", "./cmd/...")
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", nil, fmt.Errorf("go list -tags %q, %w: %s", tags, err, stderr.String())
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p struct {
				ImportPath    string
				Imports, Deps []string
			}
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return "", nil, fmt.Errorf("reading go list, %w", err)
			}
			path := strings.TrimPrefix(p.ImportPath, module)
			if pkgs[path] == nil {
				pkgs[path] = &pkg{path: path}
			}
			for _, imp := range p.Imports {
				if rel, ok := strings.CutPrefix(imp, module); ok {
					pkgs[path].imports = append(pkgs[path].imports, rel)
				}
			}
			pkgs[path].deps = append(pkgs[path].deps, p.Deps...)
		}
	}
	for _, p := range pkgs {
		slices.Sort(p.imports)
		p.imports = slices.Compact(p.imports)
	}
	return root, pkgs, nil
}

// matches reports whether a package path matches a pattern: a path, or
// a path followed by "/..." for it and every package below it.
func matches(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}
