package layers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pure are the packages that decide from plain values: they link no
// Kubernetes client. The simulated cloud's in-memory part is one; its
// API-server seams (sim/simapi) are the controller's.
var pure = []string{
	"pkg/scheduling", "pkg/provisioning/...", "pkg/scaleup", "pkg/lifecycle", "pkg/drain", "pkg/buffers", "pkg/budgets",
	"pkg/disruption", "pkg/explain", "pkg/flavors", "pkg/gang", "pkg/state", "pkg/effects", "pkg/overlay", "pkg/interruption",
	"pkg/cloudprovider", "pkg/cloudprovider/catalog", "pkg/cloudprovider/sim", "pkg/manifests", "pkg/simulator", "pkg/report",
	"pkg/printable",
	"pkg/readlimit",
	"pkg/provreq",
}

// clients are the packages that reach the API server.
var clients = []string{"sigs.k8s.io/controller-runtime/pkg/client", "k8s.io/client-go"}

// linked are the clients p links, directly or not.
func linked(p *pkg) []string {
	var out []string
	for _, c := range clients {
		if slices.ContainsFunc(p.deps, func(d string) bool { return d == c || strings.HasPrefix(d, c+"/") }) {
			out = append(out, c)
		}
	}
	return out
}

// No pure package links a client, however indirectly; a shell does, so
// the check can fail.
func TestPurePackagesLinkNoClient(t *testing.T) {
	_, pkgs := listed(t)
	for _, pattern := range pure {
		found := false
		for _, p := range pkgs {
			if !matches(pattern, p.path) {
				continue
			}
			found = true
			if l := linked(p); len(l) > 0 {
				t.Errorf("%s is pure but links %s", p.path, strings.Join(l, ", "))
			}
		}
		if !found {
			t.Errorf("pure package %s does not exist", pattern)
		}
	}
	if shell := pkgs["pkg/clusterstate"]; shell == nil || len(linked(shell)) == 0 {
		t.Error("pkg/clusterstate reads the API, yet no client was found among what it links")
	}
}

// depguard checks the pure packages' own imports in `make verify`
// (golangci-lint); its rule names the same packages.
func TestDepguardCoversThePurePackages(t *testing.T) {
	root, _ := listed(t)
	config, err := os.ReadFile(filepath.Join(root, ".golangci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pattern := range pure {
		globs := []string{`"**/` + pattern + `/**"`, `"**/` + pattern + `/*.go"`}
		if base, ok := strings.CutSuffix(pattern, "/..."); ok {
			globs = []string{`"**/` + base + `/**"`}
		}
		if !slices.ContainsFunc(globs, func(g string) bool { return strings.Contains(string(config), g) }) {
			t.Errorf(".golangci.yml: depguard's pure rule does not cover %s (want the file glob %s)", pattern, globs[0])
		}
	}
	if !strings.Contains(string(makefile), "$(GOLANGCI_LINT) run ./...") {
		t.Error("make verify no longer runs golangci-lint over every package")
	}
}
