package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SimNodeClass is the simulated cloud's NodeClass: which capacity
// reservations launches may use, the spot max price, the eviction policy
// and instance tags.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simnodeclasses,scope=Cluster,categories=capstan,shortName={snc}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type SimNodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default={}
	// +optional
	Spec SimNodeClassSpec `json:"spec,omitzero"`
	// +optional
	Status SimNodeClassStatus `json:"status,omitzero"`
}

// SimNodeClassList is a list of SimNodeClasses.
//
// +kubebuilder:object:root=true
type SimNodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimNodeClass `json:"items"`
}

// EvictionPolicy is what happens to an interrupted azure-style spot VM.
// +kubebuilder:validation:Enum=Delete;Deallocate
type EvictionPolicy string

// Eviction policies (decision 5: Deallocate is the default).
const (
	EvictionPolicyDeallocate = EvictionPolicy("Deallocate")
	EvictionPolicyDelete     = EvictionPolicy("Delete")
)

// SimNodeClassSpec is the desired configuration of launched instances.
type SimNodeClassSpec struct {
	// CapacityReservationSelectorTerms select the reservations launches may
	// use; terms are ORed. A reservation no term selects is never used, not
	// even an open one (decision 1).
	// +kubebuilder:validation:MaxItems=30
	// +optional
	CapacityReservationSelectorTerms []CapacityReservationSelectorTerm `json:"capacityReservationSelectorTerms,omitempty"`
	// SpotMaxPrice is the most an hour of spot may cost, as a decimal
	// string in dollars; unset means the on-demand price (decision 4).
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +kubebuilder:validation:MaxLength=20
	// +optional
	SpotMaxPrice *string `json:"spotMaxPrice,omitempty"`
	// EvictionPolicy is what an azure-style cloud does with an interrupted
	// spot VM: Deallocate (stop it, disks still billed) or Delete.
	// +kubebuilder:default=Deallocate
	// +optional
	EvictionPolicy EvictionPolicy `json:"evictionPolicy,omitempty"`
	// Tags are set on every launched instance.
	// +kubebuilder:validation:MaxProperties=50
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
}

// ReservationType is whether a reservation takes any matching launch (open)
// or only launches that target it (targeted).
// +kubebuilder:validation:Enum=open;targeted
type ReservationType string

// Reservation types.
const (
	ReservationTypeOpen     = ReservationType("open")
	ReservationTypeTargeted = ReservationType("targeted")
)

// CapacityReservationSelectorTerm selects reservations by id, or by any
// combination of instance type, owner, tags and type.
//
// +kubebuilder:validation:XValidation:message="'id' is mutually exclusive: a term with 'id' cannot also set 'instanceType', 'ownerID', 'tags' or 'type'",rule="has(self.id) ? !(has(self.instanceType) || has(self.ownerID) || has(self.tags) || has(self.type)) : true"
// +kubebuilder:validation:XValidation:message="a capacityReservationSelectorTerm must set at least one of 'id', 'instanceType', 'ownerID', 'tags' or 'type'",rule="has(self.id) || has(self.instanceType) || has(self.ownerID) || has(self.tags) || has(self.type)"
type CapacityReservationSelectorTerm struct {
	// ID of one reservation, e.g. cr-0a1b2c.
	// +kubebuilder:validation:Pattern=`^cr-[0-9a-z]+$`
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ID string `json:"id,omitempty"`
	// InstanceType the reservation is for.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	InstanceType string `json:"instanceType,omitempty"`
	// OwnerID is the 12-digit account that owns the reservation.
	// +kubebuilder:validation:Pattern=`^[0-9]{12}$`
	// +optional
	OwnerID string `json:"ownerID,omitempty"`
	// Tags the reservation must carry; "*" matches any value.
	// +kubebuilder:validation:MaxProperties=20
	// +kubebuilder:validation:XValidation:message="empty tag keys or values aren't supported",rule="self.all(k, k != '' && self[k] != '')"
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// Type of reservation: open or targeted.
	// +optional
	Type ReservationType `json:"type,omitempty"`
}

// SimNodeClassStatus is what the cloud resolved the spec to.
type SimNodeClassStatus struct {
	// CapacityReservations are the reservations the terms select, with
	// their free slots.
	// +optional
	CapacityReservations []CapacityReservation `json:"capacityReservations,omitempty"`
	// Conditions: Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CapacityReservation is a selected reservation as the cloud reports it.
type CapacityReservation struct {
	ID                     string          `json:"id"`
	InstanceType           string          `json:"instanceType"`
	Zone                   string          `json:"zone"`
	Type                   ReservationType `json:"type"`
	OwnerID                string          `json:"ownerID"`
	AvailableInstanceCount int             `json:"availableInstanceCount"`
	TotalInstanceCount     int             `json:"totalInstanceCount"`
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
}

// ConditionTypeReady is the SimNodeClass readiness condition.
const ConditionTypeReady = "Ready"
