package effects

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Effect is one change a step asks an applier to make. The set is closed:
// only this package's types are effects, so an applier's type switch can
// be checked for completeness.
type Effect interface{ isEffect() }

// Kind is the kind of object an effect names.
type Kind string

// The kinds effects name.
const (
	KindNodeClaim Kind = "NodeClaim"
	KindNode      Kind = "Node"
	KindPod       Kind = "Pod"
	KindNodePool  Kind = "NodePool"
	// KindProvisioningRequest is sig-autoscaling's ProvisioningRequest
	// (docs/batch.md).
	KindProvisioningRequest Kind = "ProvisioningRequest"
)

// Ref names an object; Namespace only for namespaced kinds.
type Ref struct {
	Kind      Kind
	Namespace string
	Name      string
}

// NodeClaimRef, NodeRef and PodRef name objects of their kind.
func NodeClaimRef(name string) Ref { return Ref{Kind: KindNodeClaim, Name: name} }

// NodeRef names a Node.
func NodeRef(name string) Ref { return Ref{Kind: KindNode, Name: name} }

// PodRef names a pod.
func PodRef(namespace, name string) Ref { return Ref{Kind: KindPod, Namespace: namespace, Name: name} }

// CreateNodeClaim creates a NodeClaim.
type CreateNodeClaim struct{ NodeClaim *v1.NodeClaim }

// DeleteNodeClaim deletes a NodeClaim. With the termination finalizer on
// it, deletion starts its drain; the instance goes after. Reason, when
// the deciding step sets it, says why (a registration timeout, an
// instance gone): the API applier logs it, simulate reports it as the
// node's deletionReason.
type DeleteNodeClaim struct {
	Name   string
	Reason string
}

// SetCondition sets a status condition of a NodeClaim (or, by Object, of
// another Capstan object); the step fills LastTransitionTime from now.
type SetCondition struct {
	Object    Ref
	Condition metav1.Condition
}

// RemoveCondition removes a status condition by type.
type RemoveCondition struct {
	Object Ref
	Type   string
}

// MergeMetadata merges labels and annotations into an object's and adds
// finalizers it lacks.
type MergeMetadata struct {
	Object      Ref
	Labels      map[string]string
	Annotations map[string]string
	Finalizers  []string
}

// RemoveFinalizer removes a finalizer from an object.
type RemoveFinalizer struct {
	Object    Ref
	Finalizer string
}

// SetNodeClaimStatus sets the status fields a NodeClaim's lifecycle
// records; empty or nil fields are left as they are.
type SetNodeClaimStatus struct {
	Name             string
	ProviderID       string
	ImageID          string
	NodeName         string
	Capacity         corev1.ResourceList
	Allocatable      corev1.ResourceList
	LastPodEventTime *metav1.Time
}

// PatchNode changes a Node: labels merged, taints added (when missing) and
// removed (by key and effect), finalizers added.
type PatchNode struct {
	Name         string
	Labels       map[string]string
	AddTaints    []corev1.Taint
	RemoveTaints []corev1.Taint
	Finalizers   []string
}

// Event records a Kubernetes event on Object (and Related, when set).
// Action is the events API's action; Reason is PascalCase and says why.
type Event struct {
	Object  Ref
	Related *Ref
	Type    string
	Reason  string
	Action  string
	Message string
}

// MarkUnavailable marks the offerings (and capacity types) an
// insufficient-capacity error names unavailable for the cache's TTL.
type MarkUnavailable struct {
	Error *cloudprovider.InsufficientCapacityError
}

// TriggerSolve asks the provisioner to plan pending pods: at once
// (Immediate, e.g. after a launch failed for want of capacity) or within
// its batch window.
type TriggerSolve struct{ Immediate bool }

// RequeueAt asks that the step run again at At at the latest.
type RequeueAt struct{ At time.Time }

// EvictPod evicts a pod through the Eviction API (PodDisruptionBudgets
// apply).
type EvictPod struct{ Namespace, Name string }

// DeletePod deletes a pod, with GracePeriodSeconds when set.
type DeletePod struct {
	Namespace, Name    string
	GracePeriodSeconds *int64
}

// Launch asks the cloud to create the NodeClaim's instance.
type Launch struct{ NodeClaim *v1.NodeClaim }

// Terminate asks the cloud to delete the NodeClaim's instance.
type Terminate struct{ NodeClaim *v1.NodeClaim }

// Metric adds Value to the counter Name with the labels, in order.
type Metric struct {
	Name   string
	Labels []string
	Value  float64
}

func (CreateNodeClaim) isEffect()    {}
func (DeleteNodeClaim) isEffect()    {}
func (SetCondition) isEffect()       {}
func (RemoveCondition) isEffect()    {}
func (MergeMetadata) isEffect()      {}
func (RemoveFinalizer) isEffect()    {}
func (SetNodeClaimStatus) isEffect() {}
func (PatchNode) isEffect()          {}
func (Event) isEffect()              {}
func (MarkUnavailable) isEffect()    {}
func (TriggerSolve) isEffect()       {}
func (RequeueAt) isEffect()          {}
func (EvictPod) isEffect()           {}
func (DeletePod) isEffect()          {}
func (Launch) isEffect()             {}
func (Terminate) isEffect()          {}
func (Metric) isEffect()             {}
