// Package api gathers Capstan's API groups: NewScheme registers them with
// the Kubernetes types, for tests and tools alike; the controller starts
// from NewCoreScheme and adds only its cloud provider's kinds.
package api

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
)

// NewCoreScheme returns a scheme with the Kubernetes types, karpenter.sh
// (v1 and v1alpha1's NodeOverlay), sig-autoscaling's
// ProvisioningRequest and CapacityBuffer, without any provider's NodeClass kinds.
func NewCoreScheme() (*runtime.Scheme, error) {
	return newScheme(clientgoscheme.AddToScheme, v1.AddToScheme, v1alpha1.AddToScheme, autoscalingv1.AddToScheme, autoscalingv1beta1.AddToScheme)
}

// NewScheme returns a scheme with the Kubernetes types and Capstan's API,
// every provider's kinds included.
func NewScheme() (*runtime.Scheme, error) {
	return newScheme(clientgoscheme.AddToScheme, v1.AddToScheme, v1alpha1.AddToScheme, autoscalingv1.AddToScheme, autoscalingv1beta1.AddToScheme, simv1alpha1.AddToScheme, awsv1.AddToScheme)
}

func newScheme(adds ...func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range adds {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("building scheme, %w", err)
		}
	}
	return s, nil
}
