package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// examples is the repository's examples directory.
const examples = "../../examples"

// Every example loads, as a whole and directory by directory (as
// `capstan simulate -f examples/<name>` reads it), with nothing skipped
// but the AWS provider's EC2NodeClasses (examples/aws), which simulate
// does not model: it runs on the simulated cloud.
func TestExamplesLoad(t *testing.T) {
	set, err := Load([]string{examples}, nil)
	if err != nil {
		t.Fatal(err)
	}
	set.Skipped = slices.DeleteFunc(set.Skipped, func(s Skipped) bool {
		return s.Kind == "EC2NodeClass" && strings.HasPrefix(filepath.ToSlash(s.Source), "../../examples/aws/")
	})
	if len(set.NodePools) < 10 || len(set.SimNodeClasses) < 8 || len(set.CloudProfiles) < 6 || len(set.Deployments) < 8 || len(set.OpenModels) != 2 {
		t.Errorf("read %d NodePools, %d SimNodeClasses, %d CloudProfiles, %d Deployments, %d OpenModels; want every documented example",
			len(set.NodePools), len(set.SimNodeClasses), len(set.CloudProfiles), len(set.Deployments), len(set.OpenModels))
	}
	if len(set.Skipped) > 0 {
		t.Errorf("skipped %v; every example kind is modelled", set.Skipped)
	}
	dirs, err := filepath.Glob(filepath.Join(examples, "*"))
	if err != nil {
		t.Fatal(err)
	}
	l := newLoader(t)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if _, err := l.Load([]string{dir}, nil); err != nil {
				t.Error(err)
			}
		})
	}
}

// Documents count from 1 past comment-only ones, a List's items are read
// in turn, and kinds simulate does not model are listed, NodeClaims too.
func TestReadDocumentsAndLists(t *testing.T) {
	data := `# header
---
# only a comment
---
apiVersion: v1
kind: Service
metadata: {name: svc}
--- # the List
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}
- ` + strings.ReplaceAll(strings.TrimSpace(deploymentJSON), "\n", "") + `
---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: nc}
---
apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: cloud}
`
	set := &Set{}
	if err := newLoader(t).Read("x.yaml", []byte(data), set); err != nil {
		t.Fatal(err)
	}
	want := []Skipped{
		{Source: "x.yaml, document 1", APIVersion: "v1", Kind: "Service", Name: "svc"},
		{Source: "x.yaml, document 2, item 1", APIVersion: "v1", Kind: "ConfigMap", Name: "cm"},
		{Source: "x.yaml, document 3", APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: "nc"},
	}
	if diff := cmp.Diff(want, set.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(set.Deployments) != 1 || set.Deployments[0].Name != "json" {
		t.Errorf("deployments = %v, want the List's one", set.Deployments)
	}
	// The profile is defaulted and validated as --cloud-profile would be.
	if len(set.CloudProfiles) != 1 || set.CloudProfiles[0].Source != "x.yaml, document 4" || set.CloudProfiles[0].Profile.Spec.Region != "us-west-2" {
		t.Errorf("cloud profiles = %+v, want document 4 in the default region", set.CloudProfiles)
	}
}

const deploymentJSON = `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "json"},
 "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c"}]}}}}
`

func TestReadErrors(t *testing.T) {
	const profile = "apiVersion: sim.capstan.dev/v1alpha1\nkind: CloudProfile\nmetadata: {name: c}\n"
	l := newLoader(t)
	for _, tc := range []struct {
		name, data, want string
	}{
		{"broken YAML", "kind: [\n", "x.yaml, document 1: yaml: line 1: did not find expected node content"},
		{"duplicate key", "apiVersion: v1\nkind: Pod\nkind: Pod\n", "x.yaml, document 1: yaml: unmarshal errors:\n  line 3: key \"kind\" already set in map"},
		{"not an object", "- a\n", "x.yaml, document 1: decoding an object, json: cannot unmarshal array"},
		{"no kind", "apiVersion: v1\nmetadata: {name: x}\n", "x.yaml, document 1 (x): kind: Required value"},
		{"no apiVersion or kind", "metadata: {name: x}\n", "x.yaml, document 1 (x): apiVersion: Required value\nx.yaml, document 1 (x): kind: Required value"},
		{"an old Deployment", "apiVersion: apps/v1beta2\nkind: Deployment\nmetadata: {name: web}\n",
			`x.yaml, document 1 (Deployment web): apiVersion: Unsupported value: "apps/v1beta2": supported values: "apps/v1"`},
		{"a beta NodePool", "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: p}\n",
			`x.yaml, document 1 (NodePool p): apiVersion: Unsupported value: "karpenter.sh/v1beta1": supported values: "karpenter.sh/v1"`},
		{"a List item that is not an object", "apiVersion: v1\nkind: List\nitems: [1]\n", "x.yaml, document 1, item 1: items[0]: Invalid value: 1: must be an object"},
		{"a List without a list", "apiVersion: v1\nkind: List\nitems: {a: 1}\n", `x.yaml, document 1 (List): items: Invalid value: {"a":1}: must be a list of objects`},
		{"a bad CloudProfile", profile + "spec: {region: mars-1}\n", `x.yaml, document 1 (CloudProfile c): spec.region: Unsupported value: "mars-1"`},
		{"a CloudProfile with an unknown field", profile + "spec: {regoin: us-east-1}\n",
			`decoding x.yaml, document 1 (CloudProfile c), strict decoding error: unknown field "spec.regoin"`},
		{"a bad OpenModel", "apiVersion: llmaz.io/v1alpha1\nkind: OpenModel\nmetadata: {name: m}\nspec: {inferenceConfig: {flavors: [{}]}}\n",
			"x.yaml, document 1 (OpenModel m): decoding openmodel m: spec.inferenceConfig.flavors[0]"},
		{"every bad document, numbered past comments", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\n# skip\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n",
			"x.yaml, document 1 (Pod a): spec.containers: Required value\nx.yaml, document 2 (Pod b): spec.containers: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := l.Read("x.yaml", []byte(tc.data), &Set{})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v\nwant it to start %s", err, tc.want)
			}
		})
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func namespace(name string) string {
	return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + "}\n"
}

// A directory is read at any depth, only its manifests, in path order;
// a file named on its own is read whatever its extension; stdin is "-".
func TestLoadOrder(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"b.yaml":     namespace("b"),
		"a/x.yaml":   namespace("a-x"),
		"a-b.yml":    namespace("a-b"),
		"c.json":     `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "c"}}`,
		"d/e/f.yaml": namespace("d-e-f"),
		"notes.txt":  "not a manifest: [",
	})
	set, err := Load([]string{dir, filepath.Join(dir, "notes.txt"), "-"}, strings.NewReader(namespace("stdin")))
	if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, "notes.txt")+", document 1: yaml: line 1") {
		t.Fatalf("error = %v, want the named notes.txt read", err)
	}
	if set != nil {
		t.Errorf("Load returned a Set with its error")
	}
	set, err = Load([]string{dir, "-"}, strings.NewReader(namespace("stdin")))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ns := range set.Namespaces {
		got = append(got, ns.Name)
	}
	if diff := cmp.Diff([]string{"a-b", "a-x", "b", "c", "d-e-f", "stdin"}, got); diff != "" {
		t.Errorf("namespaces in order read (-want +got):\n%s", diff)
	}
}

// Every bad file and path is reported, stdin's by name.
func TestLoadErrors(t *testing.T) {
	empty := writeFiles(t, map[string]string{"README.md": "# nothing"})
	missing := filepath.Join(empty, "missing")
	_, err := Load([]string{missing, empty, "-"}, strings.NewReader("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"))
	want := []string{
		"reading " + missing + ", stat " + missing + ": no such file or directory",
		"reading " + empty + ", no *.yaml, *.yml or *.json files in the directory",
		"stdin, document 1 (Pod p): spec.containers: Required value",
	}
	if err == nil {
		t.Fatal("no error")
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
