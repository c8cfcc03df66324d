package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The checked-in CRDs are already patched (make verify guarantees it), so
// patching them again must change nothing, and they must carry the
// constraints.
func TestPatchIsIdempotentOnTheCheckedInCRDs(t *testing.T) {
	for _, name := range []string{"karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml", "karpenter.sh_nodeoverlays.yaml"} {
		in, err := os.ReadFile("../../config/crd/" + name)
		if err != nil {
			t.Fatal(err)
		}
		out, err := patch(in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(in, out) {
			t.Errorf("%s: patching the checked-in CRD changed it", name)
		}
	}
}

// run leaves the other groups' CRDs as controller-gen wrote them: their
// constraints come from their Go types.
func TestRunPatchesOnlyKarpenterSh(t *testing.T) {
	dir := t.TempDir()
	others := []string{"karpenter.k8s.aws_ec2nodeclasses.yaml", "sim.capstan.dev_simnodeclasses.yaml"}
	want := map[string][]byte{}
	for _, name := range others {
		data, err := os.ReadFile("../../config/crd/" + name)
		if err != nil {
			t.Fatal(err)
		}
		// Unpatched and formatted unlike patch's output, so any rewrite shows.
		data = append([]byte("# as generated\n"), data...)
		want[name] = data
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range others {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[name]) {
			t.Errorf("%s: run rewrote a CRD outside karpenter.sh", name)
		}
	}
}

func TestPatchConstrainsTaintsAndLabels(t *testing.T) {
	in := []byte(`---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.karpenter.sh
spec:
  group: karpenter.sh
  names: {kind: Thing, plural: things}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          labels:
            type: object
            additionalProperties: {type: string}
          taints:
            type: array
            items:
              type: object
              properties:
                effect: {type: string}
                key: {type: string}
                value: {type: string}
`)
	out, err := patch(in)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(out, crd); err != nil {
		t.Fatal(err)
	}
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	taint := root.Properties["taints"].Items.Schema
	if got := len(taint.Properties["effect"].Enum); got != 3 {
		t.Errorf("effect enum has %d values, want 3", got)
	}
	if taint.Properties["key"].Pattern == "" || taint.Properties["key"].MinLength == nil || taint.Properties["value"].Pattern == "" {
		t.Errorf("taint key and value not constrained: %+v", taint.Properties)
	}
	if v := root.Properties["labels"].AdditionalProperties.Schema; v.Pattern != labelValuePattern || v.MaxLength == nil || *v.MaxLength != maxValueLength {
		t.Errorf("label values not constrained: %+v", v)
	}
	if again, err := patch(out); err != nil || !bytes.Equal(again, out) {
		t.Errorf("patch is not idempotent (err %v)", err)
	}
}
