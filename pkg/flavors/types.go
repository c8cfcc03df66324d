package flavors

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// ModelNameLabelKey is the pod label naming the OpenModel a pod serves;
	// its presence makes the pod a model-serving pod.
	ModelNameLabelKey = "llmaz.io/model-name"
	// FlavorsAnnotationKey is the pod annotation holding a comma-separated,
	// preference-ordered subset of the model's flavor names.
	FlavorsAnnotationKey = "llmaz.io/inference-service-flavors"
	// MaxFlavors bounds the flavors one pod may try (Decision 11): each
	// flavor multiplies the terms the solver evaluates.
	MaxFlavors = 8
	// ReasonUnknownInferenceFlavor is the pod event reason for an
	// UnknownFlavorError.
	ReasonUnknownInferenceFlavor = "UnknownInferenceFlavor"

	// Group is llmaz's API group.
	Group = "llmaz.io"
	// Version is the llmaz API version Capstan reads.
	Version = "v1alpha1"
	// OpenModelKind is the kind of llmaz's cluster-scoped model object.
	OpenModelKind = "OpenModel"
)

// OpenModelGVK identifies llmaz's OpenModel, for building unstructured
// objects and watches. Treat it as a constant (Go has no struct constants);
// FromUnstructured checks against Group, Version and OpenModelKind, not
// this variable.
var OpenModelGVK = schema.GroupVersionKind{Group: Group, Version: Version, Kind: OpenModelKind}

// OpenModel is the part of an llmaz OpenModel Capstan needs.
type OpenModel struct {
	// Name is the cluster-scoped object's name, which pods reference by
	// ModelNameLabelKey.
	Name string
	// Flavors are in the model's preference order.
	Flavors []Flavor
}

// Flavor is one way to serve a model: the nodes it may run on and the
// resources it needs there.
type Flavor struct {
	// Name is unique within the model.
	Name string
	// NodeSelector is ANDed label equality; empty means any node.
	NodeSelector map[string]string
	// Requests are the flavor's resources (llmaz's `requests`, or the
	// seed's `limits`); nil when the flavor names none.
	Requests corev1.ResourceList
}

// ModelName returns the OpenModel a pod serves and whether it is a
// model-serving pod at all.
func ModelName(pod *corev1.Pod) (string, bool) {
	if pod == nil {
		return "", false
	}
	name, ok := pod.Labels[ModelNameLabelKey]
	return name, ok
}

// flavorNames lists the model's flavor names in its order.
func (m *OpenModel) flavorNames() []string {
	names := make([]string, len(m.Flavors))
	for i, f := range m.Flavors {
		names[i] = f.Name
	}
	return names
}
