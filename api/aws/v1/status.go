package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types of an EC2NodeClass. Ready is True when every other one
// is; the others name the part that is not, as the reference's do.
const (
	ConditionTypeReady                     = "Ready"
	ConditionTypeSubnetsReady              = "SubnetsReady"
	ConditionTypeSecurityGroupsReady       = "SecurityGroupsReady"
	ConditionTypeAMIsReady                 = "AMIsReady"
	ConditionTypeInstanceProfileReady      = "InstanceProfileReady"
	ConditionTypeCapacityReservationsReady = "CapacityReservationsReady"
	ConditionTypePlacementGroupReady       = "PlacementGroupReady"
	// ConditionTypeValidationSucceeded is also where the provider reports
	// fields it accepts but does not honour yet.
	ConditionTypeValidationSucceeded = "ValidationSucceeded"
)

// EC2NodeClassStatus is what the provider resolved the spec to.
type EC2NodeClassStatus struct {
	// Subnets the subnet terms select.
	// +optional
	Subnets []Subnet `json:"subnets,omitempty"`
	// SecurityGroups the security group terms select.
	// +optional
	SecurityGroups []SecurityGroup `json:"securityGroups,omitempty"`
	// CapacityReservations the capacity reservation terms select.
	// +optional
	CapacityReservations []CapacityReservation `json:"capacityReservations,omitempty"`
	// AMIs the AMI terms select, with the instance types each fits.
	// +optional
	AMIs []AMI `json:"amis,omitempty"`
	// InstanceProfile is the instance profile launches use: the one the
	// provider made for spec.role, or spec.instanceProfile.
	// +optional
	InstanceProfile string `json:"instanceProfile,omitempty"`
	// PlacementGroup is the placement group spec.placementGroupSelector
	// names, as EC2 describes it.
	// +optional
	PlacementGroup *PlacementGroup `json:"placementGroup,omitempty"`
	// Conditions: Ready, and the condition types above. A plain list, as
	// the reference's.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Subnet is a selected subnet.
type Subnet struct {
	// ID of the subnet.
	ID string `json:"id"`
	// Zone is its availability zone, e.g. us-west-2a.
	Zone string `json:"zone"`
	// ZoneID is its zone's id, e.g. usw2-az1.
	// +optional
	ZoneID string `json:"zoneID,omitempty"`
}

// SecurityGroup is a selected security group.
type SecurityGroup struct {
	// ID of the security group.
	ID string `json:"id"`
	// Name is its GroupName.
	// +optional
	Name string `json:"name,omitempty"`
}

// AMI is a selected image.
type AMI struct {
	// ID of the image.
	ID string `json:"id"`
	// Deprecated is whether EC2 has deprecated the image.
	// +optional
	Deprecated bool `json:"deprecated,omitempty"`
	// Name of the image.
	// +optional
	Name string `json:"name,omitempty"`
	// Requirements an instance type must meet to boot the image (e.g.
	// kubernetes.io/arch In [arm64]).
	Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
}

// CapacityReservationType is whether a reservation is an ordinary one or a
// capacity block (a reservation for a fixed time window).
// +kubebuilder:validation:Enum={default,capacity-block}
type CapacityReservationType string

// Capacity reservation types.
const (
	CapacityReservationTypeDefault       = CapacityReservationType("default")
	CapacityReservationTypeCapacityBlock = CapacityReservationType("capacity-block")
)

// CapacityReservationState is whether a reservation can take launches or
// is about to end (only capacity blocks do).
// +kubebuilder:validation:Enum={active,expiring}
type CapacityReservationState string

// Capacity reservation states.
const (
	CapacityReservationStateActive   = CapacityReservationState("active")
	CapacityReservationStateExpiring = CapacityReservationState("expiring")
)

// CapacityReservation is a selected reservation as EC2 reports it.
type CapacityReservation struct {
	// AvailabilityZone the reservation is in.
	AvailabilityZone string `json:"availabilityZone"`
	// EndTime is when the reservation ends, if it does; launches into it
	// stop then.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// ID of the reservation.
	// +kubebuilder:validation:Pattern="^cr-[0-9a-z]+$"
	ID string `json:"id"`
	// InstanceMatchCriteria is which launches the reservation takes.
	InstanceMatchCriteria InstanceMatchCriteria `json:"instanceMatchCriteria"`
	// InstanceType the reservation is for.
	InstanceType string `json:"instanceType"`
	// OwnerID is the account that owns the reservation.
	// +kubebuilder:validation:Pattern="^[0-9]{12}$"
	OwnerID string `json:"ownerID"`
	// ReservationType is default or capacity-block.
	// +kubebuilder:default=default
	// +optional
	ReservationType CapacityReservationType `json:"reservationType,omitempty"`
	// Interruptible reservations may be reclaimed by their owner.
	// +optional
	Interruptible bool `json:"interruptible,omitempty"`
	// State is active, or expiring for a capacity block near its end.
	// +kubebuilder:default=active
	// +optional
	State CapacityReservationState `json:"state,omitempty"`
	// AvailableInstanceCount is how many more instances the reservation
	// takes, as EC2 last reported it.
	// +optional
	AvailableInstanceCount *int32 `json:"availableInstanceCount,omitempty"`
	// TotalInstanceCount is how many instances the reservation holds.
	// +optional
	TotalInstanceCount *int32 `json:"totalInstanceCount,omitempty"`
}

// PlacementGroup is the resolved placement group.
type PlacementGroup struct {
	// ID of the placement group.
	ID string `json:"id"`
	// Name of the placement group.
	Name string `json:"name"`
	// Strategy is cluster, partition or spread.
	Strategy string `json:"strategy"`
	// PartitionCount is a partition group's number of partitions.
	// +optional
	PartitionCount int32 `json:"partitionCount,omitempty"`
	// SpreadLevel is a spread group's level, host or rack.
	// +optional
	SpreadLevel string `json:"spreadLevel,omitempty"`
}
