package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeClaim is Capstan's request for one node: the requirements and
// resources it was sized for, and, once launched, the instance behind it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodeclaims,scope=Cluster,categories=karpenter,shortName={nc,ncs}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Type",type="string",JSONPath=".metadata.labels.node\\.kubernetes\\.io/instance-type"
// +kubebuilder:printcolumn:name="Capacity",type="string",JSONPath=".metadata.labels.karpenter\\.sh/capacity-type"
// +kubebuilder:printcolumn:name="Zone",type="string",JSONPath=".metadata.labels.topology\\.kubernetes\\.io/zone"
// +kubebuilder:printcolumn:name="Node",type="string",JSONPath=".status.nodeName"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="ImageID",type="string",JSONPath=".status.imageID",priority=1
// +kubebuilder:printcolumn:name="ID",type="string",JSONPath=".status.providerID",priority=1
// +kubebuilder:printcolumn:name="NodePool",type="string",JSONPath=".metadata.labels.karpenter\\.sh/nodepool",priority=1
// +kubebuilder:printcolumn:name="NodeClass",type="string",JSONPath=".spec.nodeClassRef.name",priority=1
// +kubebuilder:printcolumn:name="Drifted",type="string",JSONPath=".status.conditions[?(@.type==\"Drifted\")].status",priority=1
type NodeClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec NodeClaimSpec `json:"spec"`
	// +optional
	Status NodeClaimStatus `json:"status,omitempty"`
}

// NodeClaimList is a list of NodeClaims.
//
// +kubebuilder:object:root=true
type NodeClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeClaim `json:"items"`
}

// NodeClaimSpec is what a node must satisfy. It is immutable: a different
// node is a different NodeClaim.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
type NodeClaimSpec struct {
	// Taints are applied to the node.
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints are expected to be removed by an agent on the node.
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	// +optional
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements the launched instance must satisfy.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +required
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements"`
	// Resources the node was sized for.
	// +optional
	Resources ResourceRequirements `json:"resources,omitzero"`
	// NodeClassRef names the provider-specific NodeClass.
	// +required
	NodeClassRef *NodeClassReference `json:"nodeClassRef"`
	// ExpireAfter is how long the node lives before it is replaced, or Never.
	// +kubebuilder:default="720h"
	// +optional
	ExpireAfter NillableDuration `json:"expireAfter,omitzero"`
	// TerminationGracePeriod bounds how long the node may drain.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	// +optional
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
}

// ResourceRequirements are the resources a NodeClaim was sized for.
type ResourceRequirements struct {
	// Requests is the sum of the pods' (and daemonsets') requests.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
}

// NodeClaimStatus is the observed state of a NodeClaim.
type NodeClaimStatus struct {
	// NodeName is the Node registered for this NodeClaim.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// ProviderID is the cloud's id of the instance.
	// +optional
	ProviderID string `json:"providerID,omitempty"`
	// ImageID is the image the instance booted.
	// +optional
	ImageID string `json:"imageID,omitempty"`
	// Capacity of the instance.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// Allocatable is capacity less overhead.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// LastPodEventTime is when a pod last bound to or left the node;
	// consolidateAfter counts from it.
	// +optional
	LastPodEventTime metav1.Time `json:"lastPodEventTime,omitzero"`
	// Conditions: Launched, Registered, Initialized, Ready, Drifted,
	// Consolidatable, Drained, VolumesDetached, InstanceTerminating, DisruptionReason,
	// InterruptionExpected.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodeClaim condition types.
const (
	ConditionTypeLaunched            = "Launched"
	ConditionTypeRegistered          = "Registered"
	ConditionTypeInitialized         = "Initialized"
	ConditionTypeDrifted             = "Drifted"
	ConditionTypeConsolidatable      = "Consolidatable"
	ConditionTypeDrained             = "Drained"
	ConditionTypeVolumesDetached     = "VolumesDetached"
	ConditionTypeInstanceTerminating = "InstanceTerminating"
	ConditionTypeDisruptionReason    = "DisruptionReason"
	// ConditionTypeInterruptionExpected: the cloud will take the instance
	// away later (a preemptible VM's 24-hour limit, an opted-in rebalance
	// recommendation); Capstan replaces it ahead of time within budgets.
	// The reason is the notice's kind.
	ConditionTypeInterruptionExpected = "InterruptionExpected"
)
