package v1alpha1

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// restrictedCapacity are the resources an overlay's capacity cannot set:
// it adds extended resources only (the reference's v1.WellKnownResources).
var restrictedCapacity = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourcePods}

// RuntimeValidate checks what the CRD's schema cannot: that every
// requirement key is a valid label key (the schema bounds only its total
// length, not its name part's 63 characters), as the reference's
// RuntimeValidate does (pkg/apis/v1alpha1/nodeoverlay_validation.go).
// The controller reports a failure as ValidationSucceeded=False with
// reason RuntimeValidation, and such an overlay is applied nowhere.
func (o *NodeOverlay) RuntimeValidate() error {
	var errs []error
	for _, r := range o.Spec.Requirements {
		if msgs := validation.IsQualifiedName(r.Key); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("invalid value: key %s in requirements, restricted: %s", r.Key, strings.Join(msgs, "; ")))
		}
		if (r.Operator == corev1.NodeSelectorOpIn || r.Operator == corev1.NodeSelectorOpNotIn) && len(r.Values) == 0 {
			errs = append(errs, fmt.Errorf("key %s with operator %s must have a value defined", r.Key, r.Operator))
		}
	}
	for name := range o.Spec.Capacity {
		for _, restricted := range restrictedCapacity {
			if name == restricted {
				errs = append(errs, fmt.Errorf("invalid capacity: %s in resource, restricted", name))
			}
		}
	}
	return errors.Join(errs...)
}
