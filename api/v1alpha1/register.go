package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// SchemeGroupVersion is the group and version of the types in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: v1.Group, Version: "v1alpha1"}

// AddToScheme registers NodeOverlay with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &NodeOverlay{}, &NodeOverlayList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
