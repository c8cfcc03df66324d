package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// Syntax of label and taint keys (a qualified name with an optional
// lowercase DNS-subdomain prefix) and values, as Kubernetes validates them
// on Nodes.
const (
	qualifiedNamePattern = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
	labelValuePattern    = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	maxKeyLength         = 316
	maxValueLength       = 63
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdpatch DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run patches every karpenter.sh CRD in dir in place.
func run(dir string) error {
	paths, err := filepath.Glob(filepath.Join(dir, "karpenter.sh_*.yaml"))
	if err != nil {
		return err
	}
	for _, path := range paths {
		in, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading %s, %w", path, err)
		}
		out, err := patch(in)
		if err != nil {
			return fmt.Errorf("patching %s, %w", path, err)
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			return fmt.Errorf("writing %s, %w", path, err)
		}
	}
	return nil
}

// patch applies the constraints to one CRD document. Patching is
// idempotent: a patched CRD comes out unchanged.
func patch(in []byte) ([]byte, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(in, crd); err != nil {
		return nil, err
	}
	for i := range crd.Spec.Versions {
		if v := crd.Spec.Versions[i].Schema; v != nil {
			walk(v.OpenAPIV3Schema, "")
			if crd.Spec.Names.Kind == "NodeOverlay" {
				overlayValues(v.OpenAPIV3Schema)
			}
		}
	}
	// Marshal through a map so that only what controller-gen wrote comes
	// back (no empty status or creationTimestamp).
	data, err := yaml.Marshal(crd)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	delete(obj, "status")
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	data, err = yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return append([]byte("---\n"), bytes.TrimPrefix(data, []byte("---\n"))...), nil
}

// walk visits every schema below s; name is the property s is under.
func walk(s *apiextensionsv1.JSONSchemaProps, name string) {
	if s == nil {
		return
	}
	switch {
	case (name == "taints" || name == "startupTaints") && s.Items != nil:
		taint(s.Items.Schema)
	case name == "labels" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		v := s.AdditionalProperties.Schema
		v.MaxLength, v.Pattern = ptr.To[int64](maxValueLength), labelValuePattern
	}
	for k, p := range s.Properties {
		walk(&p, k)
		s.Properties[k] = p
	}
	if s.Items != nil {
		walk(s.Items.Schema, "")
	}
}

// taint constrains a corev1.Taint schema as the API server validates
// node taints.
func taint(s *apiextensionsv1.JSONSchemaProps) {
	if s == nil || s.Properties == nil {
		return
	}
	if p, ok := s.Properties["effect"]; ok {
		p.Enum = nil
		for _, e := range []string{"NoSchedule", "PreferNoSchedule", "NoExecute"} {
			p.Enum = append(p.Enum, apiextensionsv1.JSON{Raw: []byte(`"` + e + `"`)})
		}
		s.Properties["effect"] = p
	}
	if p, ok := s.Properties["key"]; ok {
		p.MinLength, p.MaxLength, p.Pattern = ptr.To[int64](1), ptr.To[int64](maxKeyLength), qualifiedNamePattern
		s.Properties["key"] = p
	}
	if p, ok := s.Properties["value"]; ok {
		p.MaxLength, p.Pattern = ptr.To[int64](maxValueLength), labelValuePattern
		s.Properties["value"] = p
	}
}

// overlayValues puts the label-value syntax on a NodeOverlay requirement's
// values array itself, where the reference's
// hack/validation/requirements.sh puts it (not on its items).
func overlayValues(root *apiextensionsv1.JSONSchemaProps) {
	spec, ok := root.Properties["spec"]
	if !ok {
		return
	}
	reqs, ok := spec.Properties["requirements"]
	if !ok || reqs.Items == nil || reqs.Items.Schema == nil {
		return
	}
	if v, ok := reqs.Items.Schema.Properties["values"]; ok {
		v.MaxLength, v.Pattern = ptr.To[int64](maxValueLength), labelValuePattern
		reqs.Items.Schema.Properties["values"] = v
	}
}
