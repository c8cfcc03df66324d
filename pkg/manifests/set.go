package manifests

import (
	"strings"

	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/printable"
)

// Set is everything the manifests hold, by kind, in the order read:
// what is applied at the start of a simulation, and the Timed changes
// after it. Objects are defaulted as applying them would default them:
// Capstan's kinds by their CRDs, a Pod's missing container requests to
// its limits, and namespaced built-in kinds that name no namespace into
// "default".
type Set struct {
	NodePools       []v1.NodePool
	NodeOverlays    []v1alpha1.NodeOverlay
	CapacityBuffers []autoscalingv1beta1.CapacityBuffer
	// PodTemplates are the templates CapacityBuffers and
	// ProvisioningRequests name.
	PodTemplates           []corev1.PodTemplate
	SimNodeClasses         []simv1alpha1.SimNodeClass
	CloudProfiles          []Profile
	Namespaces             []corev1.Namespace
	Pods                   []corev1.Pod
	Deployments            []appsv1.Deployment
	ReplicaSets            []appsv1.ReplicaSet
	StatefulSets           []appsv1.StatefulSet
	DaemonSets             []appsv1.DaemonSet
	Jobs                   []batchv1.Job
	PodDisruptionBudgets   []policyv1.PodDisruptionBudget
	PersistentVolumeClaims []corev1.PersistentVolumeClaim
	PersistentVolumes      []corev1.PersistentVolume
	StorageClasses         []storagev1.StorageClass
	OpenModels             []*flavors.OpenModel
	// PodGroups are gangs' group objects: the Workload API's PodGroups
	// (scheduling.k8s.io v1beta1 or v1alpha3) and scheduler-plugins'
	// (scheduling.x-k8s.io/v1alpha1), read as gang.Declare reads them.
	PodGroups []unstructured.Unstructured
	// ProvisioningRequests (autoscaling.x-k8s.io/v1), whose pod sets name
	// PodTemplates (docs/batch.md, "ProvisioningRequest").
	ProvisioningRequests []autoscalingv1.ProvisioningRequest
	// Skipped are documents of kinds simulate does not model (listed to
	// the user, not an error).
	Skipped []Skipped
	// Warnings are problems with objects kept nonetheless, as the
	// controller keeps them (warning.go), in the order read.
	Warnings []Warning
	// Timed are the changes the timing annotations schedule, in the order
	// they happen (timed.go). An object annotated apply-at is only here;
	// one annotated delete-at alone is in its list above, applied at the
	// start, and here as its deletion.
	Timed []TimedObject

	// sources are where each named object's versions were read, so a
	// copy is an error naming both places unless the versions follow
	// each other in time.
	sources map[objectKey]*versions
}

// objectKey is an object's identity in a cluster: applying a second
// object with the same key would overwrite the first, so simulate must
// not run both. Cluster-scoped kinds have no namespace.
type objectKey struct {
	group, kind, namespace, name string
}

// Profile is a CloudProfile, defaulted and validated against the catalog,
// and where it was read.
type Profile struct {
	// Source locates the document, e.g. "cloud.yaml, document 1".
	Source  string
	Profile *simv1alpha1.CloudProfile
}

// Skipped is a document of a kind simulate does not model.
type Skipped struct {
	Source, APIVersion, Kind, Name string
}

// String locates the document and names the object, for the user.
func (s Skipped) String() string { return describe(s.Source, s.Kind, s.Name) }

// DocumentError is everything wrong with one document. Error prints one
// problem per line, each prefixed with the document and object so the
// user finds it:
//
//	nodepool.yaml, document 2 (NodePool default): spec.weight: Invalid value: ...
type DocumentError struct {
	// Source locates the document, e.g. "nodepool.yaml, document 2", and
	// the item within a List ("..., item 3").
	Source string
	// Kind and Name are the object's, empty when the document lacks them.
	Kind, Name string
	// Errs are *field.Error values, or decoding errors.
	Errs []error
}

// Error implements error.
func (e *DocumentError) Error() string {
	prefix := describe(e.Source, e.Kind, e.Name)
	lines := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		lines[i] = prefix + ": " + err.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns Errs, for errors.As.
func (e *DocumentError) Unwrap() []error { return e.Errs }

// describe is src followed by the object, e.g. "x.yaml, document 2
// (NodePool default)".
func describe(src, kind, name string) string {
	if kind == "" && name == "" {
		return src
	}
	return src + " (" + strings.TrimSpace(printable.Quote(kind)+" "+printable.Quote(name)) + ")"
}

func fieldErrors(errs field.ErrorList) []error {
	out := make([]error, len(errs))
	for i, err := range errs {
		out[i] = err
	}
	return out
}
