package flavors

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ModelRunnerContainerName is the container llmaz's Service controller
// writes a flavor's resources into (llmaz
// pkg/controller_helper/modelsource/modelsource.go,
// MODEL_RUNNER_CONTAINER_NAME).
const ModelRunnerContainerName = "model-runner"

// InvalidModelError is an OpenModel Capstan cannot read: FromUnstructured
// refused it, or a hand-built model breaks what it checks. Its pods are
// reported with ReasonInvalidOpenModel, not as a missing model.
type InvalidModelError struct {
	err error
}

func (e *InvalidModelError) Error() string { return e.err.Error() }

func (e *InvalidModelError) Unwrap() error { return e.err }

// IsInvalidModel reports whether err is or wraps an *InvalidModelError.
func IsInvalidModel(err error) bool {
	var target *InvalidModelError
	return errors.As(err, &target)
}

// ReasonInvalidOpenModel is the pod event reason for an OpenModel that
// cannot be read (an InvalidModelError): a flavor's resources that are
// not quantities, negative, or not resource names, say.
const ReasonInvalidOpenModel = "InvalidOpenModel"

// Flavor returns the model's flavor named name.
func (m *OpenModel) Flavor(name string) (*Flavor, bool) {
	for i := range m.Flavors {
		if m.Flavors[i].Name == name {
			return &m.Flavors[i], true
		}
	}
	return nil, false
}

// WithResources is the pod as llmaz renders it for flavor f: each
// resource the flavor names replaces both the request and the limit of
// the model-runner container, and every other resource is kept (llmaz
// pkg/controller/inference/service_controller.go, injectModelFlavor).
// llmaz writes into the container named ModelRunnerContainerName; a pod
// without one (written by hand) gets the flavor's resources in its first
// container, so they are not silently dropped. A flavor without resources
// returns pod itself; otherwise the result is a copy sharing no resource
// list with pod, which is never modified.
func WithResources(pod *corev1.Pod, f *Flavor) *corev1.Pod {
	if f == nil || len(f.Requests) == 0 || len(pod.Spec.Containers) == 0 {
		return pod
	}
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == ModelRunnerContainerName })
	i = max(i, 0)
	cp := *pod
	cp.Spec.Containers = slices.Clone(pod.Spec.Containers)
	res := pod.Spec.Containers[i].Resources.DeepCopy()
	if res.Requests == nil {
		res.Requests = corev1.ResourceList{}
	}
	if res.Limits == nil {
		res.Limits = corev1.ResourceList{}
	}
	for name, q := range f.Requests {
		res.Requests[name] = q.DeepCopy()
		res.Limits[name] = q.DeepCopy()
	}
	cp.Spec.Containers[i].Resources = *res
	return &cp
}

// checkResources is what a flavor's resources must be: resource names
// (qualified names) and non-negative quantities, as a container's would
// be. FromUnstructured checks it while decoding; indexFlavors again for
// hand-built models.
func checkResources(list corev1.ResourceList) error {
	names := make([]string, 0, len(list))
	for name := range list {
		names = append(names, string(name))
	}
	slices.Sort(names)
	for _, name := range names {
		if errs := validation.IsQualifiedName(name); len(errs) > 0 {
			return fmt.Errorf("%q is not a resource name: %s", name, strings.Join(errs, "; "))
		}
		if q := list[corev1.ResourceName(name)]; q.Sign() < 0 {
			return fmt.Errorf("%s quantity %s is negative", name, q.String())
		}
	}
	return nil
}

// Needs describes a flavor's resources for a message: "2 nvidia.com/gpu,
// 16Gi memory", names sorted; "" when it names none.
func Needs(f *Flavor) string {
	if f == nil || len(f.Requests) == 0 {
		return ""
	}
	parts := make([]string, 0, len(f.Requests))
	for name, q := range f.Requests {
		parts = append(parts, q.String()+" "+string(name))
	}
	slices.SortFunc(parts, func(a, b string) int {
		return strings.Compare(a[strings.IndexByte(a, ' '):], b[strings.IndexByte(b, ' '):])
	})
	return strings.Join(parts, ", ")
}
