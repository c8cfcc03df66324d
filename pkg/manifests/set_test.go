package manifests

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestDocumentError(t *testing.T) {
	weight := field.Invalid(field.NewPath("spec", "weight"), 0, "must be at least 1")
	for _, tc := range []struct {
		name string
		err  *DocumentError
		want string
	}{
		{"kind and name", &DocumentError{Source: "x.yaml, document 2", Kind: "NodePool", Name: "default", Errs: []error{weight}},
			"x.yaml, document 2 (NodePool default): spec.weight: Invalid value: 0: must be at least 1"},
		{"one line per error", &DocumentError{Source: "x.yaml, document 1", Kind: "Pod", Name: "p", Errs: []error{weight, errors.New("second")}},
			"x.yaml, document 1 (Pod p): spec.weight: Invalid value: 0: must be at least 1\nx.yaml, document 1 (Pod p): second"},
		{"kind only", &DocumentError{Source: "x.yaml, document 1", Kind: "List", Errs: []error{errors.New("bad")}},
			"x.yaml, document 1 (List): bad"},
		{"neither", &DocumentError{Source: "-, document 3", Errs: []error{errors.New("bad")}},
			"-, document 3: bad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.err.Error()); diff != "" {
				t.Errorf("Error() (-want +got):\n%s", diff)
			}
		})
	}
}

// Callers reach the field errors of a joined Read error with errors.As.
func TestDocumentErrorUnwraps(t *testing.T) {
	weight := field.Invalid(field.NewPath("spec", "weight"), 0, "must be at least 1")
	err := errors.Join(&DocumentError{Source: "x.yaml, document 1", Errs: []error{weight}})
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "spec.weight" {
		t.Errorf("errors.As found %v, want the spec.weight error", fe)
	}
	var de *DocumentError
	if !errors.As(err, &de) || de.Source != "x.yaml, document 1" {
		t.Errorf("errors.As found %v, want the DocumentError", de)
	}
}

// The same object twice (kind, namespace and name; cluster-scoped kinds
// by kind and name) is an error naming both places, never two objects.
func TestDuplicateObjects(t *testing.T) {
	const (
		web          = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n"
		webInTeam    = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: team}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n"
		webInDefault = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n"
		webPod       = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c}]}\n"
		pool         = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec: {template: {spec: {requirements: [], nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}}}}\n"
		poolInNS     = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default, namespace: team}\nspec: {template: {spec: {requirements: [], nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}}}}\n"
		profile      = "apiVersion: sim.capstan.dev/v1alpha1\nkind: CloudProfile\nmetadata: {name: cloud}\n"
		unnamed      = "apiVersion: sim.capstan.dev/v1alpha1\nkind: CloudProfile\n"
		model        = "apiVersion: llmaz.io/v1alpha1\nkind: OpenModel\nmetadata: {name: m}\nspec: {inferenceConfig: {flavors: [{name: a10g, limits: {nvidia.com/gpu: 1}}]}}\n"
	)
	docs := func(d ...string) string { return strings.Join(d, "---\n") }
	l := newLoader(t)
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"a Deployment twice", docs(web, webPod, web),
			[]string{`x.yaml, document 3 (Deployment web): metadata.name: Duplicate value: "web": Deployment default/web is already in x.yaml, document 1`}},
		{"the default namespace, implicit and explicit", docs(web, webInDefault),
			[]string{`x.yaml, document 2 (Deployment web): metadata.name: Duplicate value: "web": Deployment default/web is already in x.yaml, document 1`}},
		{"a NodePool twice, namespaces ignored", docs(pool, poolInNS),
			[]string{`x.yaml, document 2 (NodePool default): metadata.name: Duplicate value: "default": NodePool default is already in x.yaml, document 1`}},
		{"a CloudProfile twice", docs(profile, profile),
			[]string{`x.yaml, document 2 (CloudProfile cloud): metadata.name: Duplicate value: "cloud": CloudProfile cloud is already in x.yaml, document 1`}},
		{"an OpenModel twice", docs(model, model),
			[]string{`x.yaml, document 2 (OpenModel m): metadata.name: Duplicate value: "m": OpenModel m is already in x.yaml, document 1`}},
		{"within a List", docs(web, "apiVersion: v1\nkind: List\nitems:\n- "+strings.ReplaceAll(strings.TrimSpace(deploymentJSON), "\n", "")+"\n- "+strings.ReplaceAll(strings.TrimSpace(deploymentJSON), "\n", "")+"\n"),
			[]string{`x.yaml, document 2, item 2 (Deployment json): metadata.name: Duplicate value: "json": Deployment default/json is already in x.yaml, document 2, item 1`}},
		{"three copies, each later one", docs(web, web, web), []string{
			`x.yaml, document 2 (Deployment web): metadata.name: Duplicate value: "web": Deployment default/web is already in x.yaml, document 1`,
			`x.yaml, document 3 (Deployment web): metadata.name: Duplicate value: "web": Deployment default/web is already in x.yaml, document 1`,
		}},
		{"an invalid first copy does not hold the name", docs(strings.Replace(web, "{name: c}", "{name: c, resources: {requests: {cpu: -1}}}", 1), web),
			[]string{`x.yaml, document 1 (Deployment web): spec.template.spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`}},
		{"other namespaces, kinds and unnamed profiles are distinct", docs(web, webInTeam, webPod, unnamed, unnamed), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			if err := l.Read("x.yaml", []byte(tc.data), &Set{}); err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// Load checks duplicates across files and stdin, naming each.
func TestDuplicateObjectsAcrossFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": namespace("team"), "b/c.yaml": namespace("other") + "---\n" + namespace("team")})
	_, err := Load([]string{dir, "-"}, strings.NewReader(namespace("other")))
	want := []string{
		filepath.Join(dir, "b/c.yaml") + `, document 2 (Namespace team): metadata.name: Duplicate value: "team": Namespace team is already in ` + filepath.Join(dir, "a.yaml") + ", document 1",
		`stdin, document 1 (Namespace other): metadata.name: Duplicate value: "other": Namespace other is already in ` + filepath.Join(dir, "b/c.yaml") + ", document 1",
	}
	if err == nil {
		t.Fatal("no error")
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
