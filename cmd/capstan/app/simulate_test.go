package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/capstan-dev/capstan/pkg/simulator"
)

func TestSimulateWritesTheReportAsWellAsTheOutput(t *testing.T) {
	example := filepath.Join("..", "..", "..", "examples", "spot-shortage")
	path := filepath.Join(t.TempDir(), "report.html")
	out, err := run(t, "simulate", "-f", example, "-o", "json", "--report", path)
	if err != nil {
		t.Fatalf("simulate: %v\n%s", err, out)
	}
	var r simulator.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Samples) == 0 {
		t.Fatalf("-o json printed no result with --report (%v):\n%s", err, out)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>capstan simulate -f " + example + "</title>", `data-chart="nodes"`, `data-chart="cost"`, `data-chart="pending"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report has no %s", want)
		}
	}

	missing := filepath.Join(t.TempDir(), "no-such-dir", "report.html")
	if _, err := run(t, "simulate", "-f", example, "--report", missing); err == nil || !strings.Contains(err.Error(), "creating report") {
		t.Errorf("--report into a missing directory: err = %v, want a creating report error", err)
	}
}

// Documents of kinds simulate does not model are listed, with what does
// not print in their names escaped.
func TestSimulateListsSkippedKindsEscaped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.yaml")
	data := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n---\napiVersion: example.com/v1\nkind: \"Evil\\e[2J\"\nmetadata: {name: x}\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "simulate", "-f", path, "--duration", "1m")
	if err != nil {
		t.Fatalf("simulate: %v\n%s", err, out)
	}
	want := "skipped 2 document(s) of kinds simulate does not model: " + path + ", document 1 (ConfigMap settings), " + path + `, document 2 ("Evil\x1b[2J" x)` + "\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("output starts %q, want %q", out, want)
	}
}

// simCluster is a NodePool that allows every instance type, on its
// SimNodeClass.
const simCluster = `apiVersion: sim.capstan.dev/v1alpha1
kind: SimNodeClass
metadata: {name: default}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}
      requirements: []
`

// A launch fault's message from the cloud profile is printed with what
// does not print escaped, in the text summary and in -o json alike.
func TestSimulateEscapesAProfilesMessages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.yaml")
	data := `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: faults}
spec:
  launchFaults:
  - {code: UnauthorizedOperation, until: 2m, message: "denied\e[2J\r\u202eevil"}
---
` + simCluster + `---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: c, image: pause, resources: {requests: {cpu: "1"}}}]}
`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for output, want := range map[string]string{"text": `denied\x1b[2J\r\u202eevil`, "json": `denied\u001b[2J\r\u202eevil`} {
		out, err := run(t, "simulate", "-f", path, "--duration", "5m", "-o", output)
		if err != nil {
			t.Fatalf("simulate -o %s: %v\n%s", output, err, out)
		}
		if !strings.Contains(out, want) {
			t.Errorf("-o %s does not show the message as %s:\n%s", output, want, out)
		}
		if strings.ContainsAny(out, "\x1b\r\u202e") {
			t.Errorf("-o %s holds a raw control character:\n%q", output, out)
		}
	}
}

// simulate runs the controller's steps with the controller's defaults: a
// flag both commands take starts from the same value (each default is
// defined once, in the package that owns it).
func TestSimulateSharesTheControllersDefaults(t *testing.T) {
	controller, simulate := newControllerCommand().Flags(), newSimulateCommand().Flags()
	shared := 0
	simulate.VisitAll(func(f *pflag.Flag) {
		c := controller.Lookup(f.Name)
		if c == nil {
			return // simulate's own
		}
		shared++
		if f.DefValue != c.DefValue {
			t.Errorf("--%s defaults to %q in simulate, %q in controller", f.Name, f.DefValue, c.DefValue)
		}
	})
	if shared < 10 {
		t.Errorf("simulate shares %d flags with controller, want the batch windows, TTLs, instance types and disruption flags", shared)
	}
}

// --scheduler-names is the controller's: pods of another scheduler get
// nodes only when it is named.
func TestSimulateServesTheNamedSchedulers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.yaml")
	data := simCluster + `---
apiVersion: v1
kind: Pod
metadata: {name: served, namespace: default}
spec:
  schedulerName: llmaz-scheduler
  containers: [{name: app, image: app, resources: {requests: {cpu: "1"}}}]
`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		nodes int
	}{
		{nodes: 0},
		{args: []string{"--scheduler-names=default-scheduler,llmaz-scheduler"}, nodes: 1},
	} {
		out, err := run(t, append([]string{"simulate", "-f", path, "--duration", "1m", "-o", "json"}, tc.args...)...)
		if err != nil {
			t.Fatalf("simulate %v: %v\n%s", tc.args, err, out)
		}
		var r simulator.Result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Nodes) != tc.nodes {
			t.Errorf("simulate %v launched %d nodes, want %d", tc.args, len(r.Nodes), tc.nodes)
		}
	}
}
