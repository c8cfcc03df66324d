package layers

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// layers are the module's packages from the bottom up, as AGENTS.md
// draws them. A package imports only packages of lower layers, and within
// its own entry (a pattern ending in "/..." is one entry however many
// packages it holds): never one beside it or above it. A package takes
// the first entry that matches it.
var layers = [][]string{
	{"api/...", "config/..."},
	// Leaves: the requirements algebra, budget windows, llmaz flavors, gangs,
	// escaping for the terminal, capped reads of files and streams.
	{"pkg/scheduling", "pkg/budgets", "pkg/flavors", "pkg/gang", "pkg/version", "pkg/printable", "pkg/readlimit"},
	// The cloud seam: the interface, offerings, errors.
	{"pkg/cloudprovider"},
	// The effect vocabulary the steps return; NodeOverlays applied to the
	// cloud's instance types.
	{"pkg/effects", "pkg/overlay"},
	{"pkg/cloudprovider/catalog", "pkg/provisioning/..."},
	// The providers, and the snapshot the steps read.
	{"pkg/cloudprovider/...", "pkg/state"},
	// The drain's rules; CapacityBuffers sized into virtual pods.
	{"pkg/drain", "pkg/buffers"},
	{"pkg/disruption"},
	// The provisioner's step and the NodeClaim steps; the admission checks
	// the controller and simulate share.
	// ProvisioningRequests' steps (pkg/provreq) sit beside them.
	{"pkg/scaleup", "pkg/lifecycle", "pkg/interruption", "pkg/admission", "pkg/provreq"},
	{"pkg/explain", "pkg/clusterstate", "pkg/manifests"},
	{"pkg/simulator"},
	// The applier the controllers hand effects to, and the field indexes
	// they look objects up by.
	{"pkg/controllers/apply", "pkg/controllers/index"},
	// The shells: each controller is its own entry.
	{"pkg/report", "pkg/controllers/capacitybuffer", "pkg/controllers/clustermetrics", "pkg/controllers/disrupter",
		"pkg/controllers/ec2nodeclass", "pkg/controllers/explainserver", "pkg/controllers/gangrelease", "pkg/controllers/garbagecollection",
		"pkg/controllers/nodeclaim", "pkg/controllers/nodeoverlay", "pkg/controllers/nodepool", "pkg/controllers/provisioner",
		"pkg/controllers/provisioningrequest",
		"pkg/controllers/simnodeclass", "pkg/controllers/staticpool", "pkg/controllers/termination"},
	// The filter in front of explain's server.
	{"pkg/controllers/apiauth"},
	// Each cloud as one value (docs/providers.md): its flags, kinds, RBAC
	// and controllers.
	{"pkg/providers"},
	{"pkg/providers/sim", "pkg/providers/aws"},
	{"cmd/..."},
}

// testOnly are imported by tests alone; they may import anything below
// cmd.
var testOnly = []string{"pkg/test/..."}

// entry is where a package sits: its layer and its entry's pattern; -1
// for test-only packages, and ok false for an undeclared one.
func entry(path string) (layer int, pattern string, ok bool) {
	for i, l := range layers {
		for _, p := range l {
			if matches(p, path) {
				return i, p, true
			}
		}
	}
	for _, p := range testOnly {
		if matches(p, path) {
			return -1, p, true
		}
	}
	return 0, "", false
}

// violations are the imports of pkgs that break the order, as text.
func violations(pkgs map[string]*pkg) (broken []string) {
	for _, p := range pkgs {
		from, fromEntry, ok := entry(p.path)
		if !ok {
			broken = append(broken, fmt.Sprintf("%s is in no layer: add it to layers", p.path))
			continue
		}
		for _, imp := range p.imports {
			to, toEntry, ok := entry(imp)
			switch {
			case !ok:
				broken = append(broken, fmt.Sprintf("%s imports %s, which is in no layer", p.path, imp))
			case to == -1 && from != -1:
				broken = append(broken, fmt.Sprintf("%s imports %s, which only tests may", p.path, imp))
			case from == -1 || fromEntry == toEntry || to < from:
			default:
				broken = append(broken, fmt.Sprintf("%s (layer %d) imports %s (layer %d)", p.path, from, imp, to))
			}
		}
	}
	sort.Strings(broken)
	return broken
}

// No package imports one beside or above it.
func TestImportsFollowTheLayers(t *testing.T) {
	_, pkgs := listed(t)
	broken := violations(pkgs)
	for _, b := range broken {
		t.Error(b)
	}
}

// The check finds an import that points up, one beside, one into
// test-only code and an undeclared package.
func TestViolationsAreFound(t *testing.T) {
	pkgs := map[string]*pkg{
		"pkg/disruption":        {path: "pkg/disruption", imports: []string{"pkg/scaleup", "pkg/provisioning/checker"}},
		"pkg/scaleup":           {path: "pkg/scaleup", imports: []string{"pkg/lifecycle"}},
		"pkg/lifecycle":         {path: "pkg/lifecycle", imports: []string{"pkg/test"}},
		"pkg/provisioning":      {path: "pkg/provisioning"},
		"pkg/provisioning/grow": {path: "pkg/provisioning/grow", imports: []string{"pkg/provisioning"}},
		"pkg/newthing":          {path: "pkg/newthing"},
	}
	broken := violations(pkgs)
	want := []string{
		"pkg/disruption (layer 7) imports pkg/scaleup (layer 8)",
		"pkg/lifecycle imports pkg/test, which only tests may",
		"pkg/newthing is in no layer: add it to layers",
		"pkg/scaleup (layer 8) imports pkg/lifecycle (layer 8)",
	}
	if !slices.Equal(broken, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(broken, "\n"), strings.Join(want, "\n"))
	}
}
