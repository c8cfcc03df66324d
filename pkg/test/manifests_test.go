package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadManifestFile(t *testing.T) {
	cases := []struct {
		name    string
		content string
		want    []map[string]any
		wantErr string
	}{
		{name: "empty file", content: ""},
		{
			name:    "one document",
			content: "kind: A\nmetadata:\n  name: a\n",
			want:    []map[string]any{{"kind": "A", "metadata": map[string]any{"name": "a"}}},
		},
		{
			name:    "several documents in order",
			content: "kind: A\n---\nkind: B\nspec:\n  replicas: 2\n---\nkind: C\n",
			want:    []map[string]any{{"kind": "A"}, {"kind": "B", "spec": map[string]any{"replicas": float64(2)}}, {"kind": "C"}},
		},
		{
			name:    "empty and comment-only documents skipped",
			content: "---\n# leading comment\n---\nkind: A\n---\n\n---\n# only a comment\n---\nkind: B\n---\n",
			want:    []map[string]any{{"kind": "A"}, {"kind": "B"}},
		},
		{
			name:    "null document skipped",
			content: "null\n---\nkind: A\n",
			want:    []map[string]any{{"kind": "A"}},
		},
		{
			name:    "JSON",
			content: `{"kind": "A", "list": [1, "x"]}`,
			want:    []map[string]any{{"kind": "A", "list": []any{float64(1), "x"}}},
		},
		{
			name:    "invalid YAML",
			content: "kind: A\n---\nkind: [unclosed\n",
			wantErr: "decoding manifest",
		},
		{
			name:    "a document that is not a mapping",
			content: "- a\n- b\n",
			wantErr: "decoding manifest",
		},
		{
			name:    "truncated JSON",
			content: `{"kind": "A",`,
			wantErr: "decoding manifest",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "manifest.yaml")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			objs, err := readManifestFile(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v, want one saying %q and naming %s", err, tc.wantErr, path)
				}
				if objs != nil {
					t.Errorf("objects %v returned with the error", objs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []map[string]any
			for _, o := range objs {
				got = append(got, o.Object)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("documents (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadManifestFileMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.yaml")
	_, err := readManifestFile(path)
	if err == nil || !strings.Contains(err.Error(), "opening manifest "+path) {
		t.Errorf("error %v, want one naming %s", err, path)
	}
}

func TestReadManifestsFromModuleRoot(t *testing.T) {
	manifests, err := ReadManifests("config/crd/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range manifests {
		if m.Object.GetKind() != "CustomResourceDefinition" {
			t.Errorf("%s: kind %q, want CustomResourceDefinition", m.Path, m.Object.GetKind())
		}
		got = append(got, m.Path+" "+m.Object.GetName())
	}
	want := []string{
		"config/crd/autoscaling.x-k8s.io_capacitybuffers.yaml capacitybuffers.autoscaling.x-k8s.io",
		"config/crd/karpenter.k8s.aws_ec2nodeclasses.yaml ec2nodeclasses.karpenter.k8s.aws",
		"config/crd/karpenter.sh_nodeclaims.yaml nodeclaims.karpenter.sh",
		"config/crd/karpenter.sh_nodeoverlays.yaml nodeoverlays.karpenter.sh",
		"config/crd/karpenter.sh_nodepools.yaml nodepools.karpenter.sh",
		"config/crd/sim.capstan.dev_simnodeclasses.yaml simnodeclasses.sim.capstan.dev",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifests, with paths relative to the module root (-want +got):\n%s", diff)
	}

	none, err := ReadManifests("config/crd/*.nothing")
	if err != nil || len(none) != 0 {
		t.Errorf("ReadManifests of a pattern matching nothing = %v, %v; want none and no error", none, err)
	}
	if _, err := ReadManifests("config/[crd"); err == nil {
		t.Error("ReadManifests of a malformed pattern returned no error")
	}
}
