package manifests

import (
	"errors"
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
