package manifests

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-dev/capstan/pkg/admission"
	"github.com/capstan-dev/capstan/pkg/printable"
)

// Warning is a problem with an object that is kept nonetheless, as the
// API server keeps it: a NodePool setting the CRD lets through but
// Capstan cannot use (admission.NodePool), which the controller reports
// on the NodePool's ValidationSucceeded condition and simulate in its
// output.
type Warning struct {
	// Source locates the document, e.g. "nodepool.yaml, document 2".
	Source string
	// Kind and Name are the object's.
	Kind, Name string
	// Err is the problem at its field path.
	Err *field.Error
}

// String locates the document, names the object and says what is
// wrong, as DocumentError does each problem.
func (w Warning) String() string {
	return describe(w.Source, w.Kind, w.Name) + ": " + printable.Quote(w.Err.Error())
}

// warnings are the problems of the NodePools read holds, read at src.
func warnings(src string, read *Set) []Warning {
	var out []Warning
	for i := range read.NodePools {
		np := &read.NodePools[i]
		for _, err := range admission.NodePool(np) {
			out = append(out, Warning{Source: src, Kind: "NodePool", Name: np.Name, Err: err})
		}
	}
	return out
}
