package test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Manifest is one YAML document and the file it came from.
type Manifest struct {
	Path   string
	Object *unstructured.Unstructured
}

// ReadManifests decodes every YAML document in the files matching pattern
// (relative to the module root).
func ReadManifests(pattern string) ([]Manifest, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil {
		return nil, fmt.Errorf("listing manifests %s, %w", pattern, err)
	}
	var manifests []Manifest
	for _, path := range paths {
		docs, err := readManifestFile(path)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, path)
		for _, doc := range docs {
			manifests = append(manifests, Manifest{Path: rel, Object: doc})
		}
	}
	return manifests, nil
}

func readManifestFile(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening manifest %s, %w", path, err)
	}
	defer func() { _ = f.Close() }()
	decoder := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("decoding manifest %s, %w", path, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}
