// Package api gathers Capstan's API groups: NewScheme registers them with
// the Kubernetes types, for the controller, tests and tools alike.
package api

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// NewScheme returns a scheme with the Kubernetes types and Capstan's API.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1.AddToScheme, simv1alpha1.AddToScheme, awsv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("building scheme, %w", err)
		}
	}
	return s, nil
}
