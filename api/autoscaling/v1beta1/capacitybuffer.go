package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names the API defines (kubernetes-sigs/karpenter v1.14.1
// pkg/apis/autoscaling/v1beta1/constants.go, mirroring cluster-autoscaler's).
const (
	// ActiveProvisioningStrategy keeps the buffer's capacity up at all
	// times; it is the default and the only strategy Capstan acts on.
	ActiveProvisioningStrategy = "buffer.x-k8s.io/active-capacity"

	// ConditionReadyForProvisioning is True once the pod template is
	// resolved and the replicas computed.
	ConditionReadyForProvisioning = "ReadyForProvisioning"
	// ConditionProvisioning is True when every replica fits capacity that
	// exists (nodes and NodeClaims already launched).
	ConditionProvisioning = "Provisioning"
	// ConditionLimitedByQuotas is True when quotas cut the buffer short.
	ConditionLimitedByQuotas = "LimitedByQuotas"

	// The scalableRef kinds whose pod template is read from their spec.
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	KindReplicaSet  = "ReplicaSet"
)

// CapacityBuffer is spare capacity kept in the cluster: placeholder
// (virtual) pods of a template that the autoscaler provisions for, so
// that real pods start at once.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=capacitybuffers,scope=Namespaced,shortName=cb,categories=autoscaling
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Strategy",type="string",JSONPath=".spec.provisioningStrategy",description="The strategy to be used."
// +kubebuilder:printcolumn:name="PodTemplate",type="string",JSONPath=".status.podTemplateRef.name",description="The name of the PodTemplate used."
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="The actual number of buffer chunks."
// +kubebuilder:printcolumn:name="ConditionsType",type="string",JSONPath=".status.conditions[*].type",description="List of all condition types."
// +kubebuilder:printcolumn:name="ConditionsStatus",type="string",JSONPath=".status.conditions[*].status",description="List of all condition statuses."
// +kubebuilder:printcolumn:name="ConditionsReason",type="string",JSONPath=".status.conditions[*].reason",description="List of all condition reasons."
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="The age of the CapacityBuffer."
type CapacityBuffer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the buffer's desired shape and size.
	// +required
	Spec CapacityBufferSpec `json:"spec"`

	// status is what the buffer controller resolved and the autoscaler
	// provisioned.
	// +optional
	Status CapacityBufferStatus `json:"status,omitempty"`
}

// Limits bound the buffer's total requests.
type Limits corev1.ResourceList

// LocalObjectRef names an object in the buffer's namespace.
type LocalObjectRef struct {
	// name of the referent.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// ScalableRef names an object with a scale subresource in the buffer's
// namespace.
type ScalableRef struct {
	// apiGroup is the API group of the referent; empty for the core group.
	// +optional
	APIGroup string `json:"apiGroup,omitempty"`

	// kind is the kind of the referent.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`

	// name is the name of the referent.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// CapacityBufferSpec is the buffer's shape (one chunk: a pod template,
// given directly or as a scalable object's) and size.
//
// +kubebuilder:validation:XValidation:rule="!has(self.podTemplateRef) || has(self.replicas) || has(self.limits)",message="If podTemplateRef is set, replicas or limits must also be set"
// +kubebuilder:validation:XValidation:rule="!(has(self.podTemplateRef) && has(self.scalableRef))",message="You must define either PodTemplateRef or ScalableRef, but not both"
type CapacityBufferSpec struct {
	// provisioningStrategy is how the buffer is provisioned;
	// "buffer.x-k8s.io/active-capacity", the default, keeps it up at all
	// times.
	// +default="buffer.x-k8s.io/active-capacity"
	// +optional
	ProvisioningStrategy *string `json:"provisioningStrategy,omitempty"`

	// podTemplateRef names a PodTemplate in the buffer's namespace, the
	// shape of one chunk. Exactly one of podTemplateRef and scalableRef
	// should be set.
	// +optional
	PodTemplateRef *LocalObjectRef `json:"podTemplateRef,omitempty"`

	// scalableRef names an object with a scale subresource whose pods are
	// the shape of one chunk. Exactly one of podTemplateRef and
	// scalableRef should be set.
	// +optional
	ScalableRef *ScalableRef `json:"scalableRef,omitempty"`

	// replicas is the number of chunks. With percentage, the larger of the
	// two; limits cap either. With neither, as many chunks as fit limits.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMinimum=false
	Replicas *int32 `json:"replicas,omitempty"`

	// percentage is the number of chunks as a percentage of the
	// scalableRef's replicas, rounded up, and at least 1 when both are
	// positive; only with scalableRef.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMinimum=false
	Percentage *int32 `json:"percentage,omitempty"`

	// limits bound the chunks' total requests (cpu, memory, ...).
	// +optional
	Limits Limits `json:"limits,omitempty"`
}

// CapacityBufferStatus is what the buffer controller resolved and the
// autoscaler provisioned.
type CapacityBufferStatus struct {
	// podTemplateRef is the PodTemplate the chunks were built from, when
	// the buffer names one.
	// +optional
	PodTemplateRef *LocalObjectRef `json:"podTemplateRef,omitempty"`

	// replicas is the number of chunks the buffer keeps.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// podTemplateGeneration is the generation of the PodTemplate read.
	// +optional
	PodTemplateGeneration *int64 `json:"podTemplateGeneration,omitempty"`

	// conditions are ReadyForProvisioning and Provisioning.
	// +optional
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// provisioningStrategy is the strategy the status was computed for.
	// +optional
	ProvisioningStrategy *string `json:"provisioningStrategy,omitempty"`
}

// CapacityBufferList is a list of CapacityBuffers.
//
// +kubebuilder:object:root=true
type CapacityBufferList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CapacityBuffer `json:"items"`
}
