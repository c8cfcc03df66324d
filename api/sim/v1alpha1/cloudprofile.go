package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CloudProfile describes the simulated cloud: its region and zones, how it
// behaves (aws, gcp or azure style), finite capacity, prices, reservations
// and scripted events. It is a file format (flag --cloud-profile), not a
// CRD. Offsets (launchLatency, event "at", reservation start and end) are
// durations from the cloud's start.
type CloudProfile struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	Metadata metav1.ObjectMeta `json:"metadata,omitzero"`
	Spec     CloudProfileSpec  `json:"spec"`
}

// CloudStyle selects whose spot semantics the simulated cloud follows.
type CloudStyle string

// Cloud styles (seed 000).
const (
	CloudStyleAWS   = CloudStyle("aws")
	CloudStyleGCP   = CloudStyle("gcp")
	CloudStyleAzure = CloudStyle("azure")
)

// CloudProfileSpec is the simulated cloud's configuration.
type CloudProfileSpec struct {
	Region string   `json:"region"`
	Zones  []string `json:"zones"`
	// ZoneIDs maps a zone to its ID, the topology.k8s.aws/zone-id value
	// of its nodes: AWS names zones per account but IDs them the same for
	// everyone. A zone not listed gets an ID from the region and its
	// letter or number, AWS style: us-east-1a is use1-az1.
	// +optional
	ZoneIDs map[string]string `json:"zoneIDs,omitempty"`
	Style   CloudStyle        `json:"style"`
	// LaunchLatency is how long an instance takes to register its Node.
	// +optional
	LaunchLatency metav1.Duration `json:"launchLatency,omitzero"`
	// ReservationRefreshInterval is how often the account re-reads how
	// much of its reservations other accounts use (zero: one minute).
	// Between refreshes a reservation advertises the slots it had then,
	// less the account's own launches since; a launch that finds it full
	// fails with ReservationCapacityExceeded and refreshes it at once.
	// +optional
	ReservationRefreshInterval metav1.Duration `json:"reservationRefreshInterval,omitzero"`
	// SpotNotice overrides the style's spot interruption notice (AWS two
	// minutes, GCP and Azure thirty seconds), to compress time in tests.
	// +optional
	SpotNotice metav1.Duration `json:"spotNotice,omitzero"`
	// MaxSpotInstances caps the account's running spot instances (0:
	// no cap); a launch past it fails with MaxSpotInstanceCountExceeded,
	// which marks spot unavailable account-wide.
	// +optional
	MaxSpotInstances int `json:"maxSpotInstances,omitempty"`
	// Capacity makes pools finite; pools not listed are unlimited.
	// +optional
	Capacity []CapacityPool `json:"capacity,omitempty"`
	// SpotPrices override the default per-family spot discount.
	// +optional
	SpotPrices []SpotPrice `json:"spotPrices,omitempty"`
	// Reservations are the account's capacity reservations.
	// +optional
	Reservations []Reservation `json:"reservations,omitempty"`
	// Events happen at offsets from the start.
	// +optional
	Events []CloudEvent `json:"events,omitempty"`
	// Subnets are the subnets of the zones they name, in order, for the
	// local EC2 endpoint (test/ec2endpoint); a zone none names has one
	// /19. The simulated cloud itself has no subnets.
	// +optional
	Subnets []Subnet `json:"subnets,omitempty"`
	// LaunchFaults make the cloud refuse launches, as a real account
	// does when it is misconfigured, lacks a permission or a quota.
	// +optional
	LaunchFaults []LaunchFault `json:"launchFaults,omitempty"`
	// RepairPolicies are the node conditions that make a node unhealthy,
	// each tolerated for a while before Capstan repairs the node
	// (docs/disruption.md, "Node repair"). Unset: the kubelet's, Ready
	// False or Unknown for 30 minutes, as the AWS provider's.
	// +optional
	RepairPolicies []RepairPolicy `json:"repairPolicies,omitempty"`
}

// RepairPolicy is one node condition, and status, that makes a node
// unhealthy once it has held for TolerationDuration.
type RepairPolicy struct {
	ConditionType      string          `json:"conditionType"`
	ConditionStatus    string          `json:"conditionStatus"`
	TolerationDuration metav1.Duration `json:"tolerationDuration"`
}

// Subnet is one subnet of a zone: its size, the addresses taken by
// network interfaces outside the cloud's instances, and its tags.
type Subnet struct {
	Zone string `json:"zone"`
	// PrefixLength is the subnet's CIDR prefix length, 19 (the zone's
	// whole block) to 28 (AWS's smallest subnet).
	PrefixLength int `json:"prefixLength"`
	// UsedAddresses are taken by other network interfaces.
	// +optional
	UsedAddresses int `json:"usedAddresses,omitempty"`
	// Tags replace the cluster's discovery tags, so only a NodeClass that
	// selects them uses the subnet.
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
}

// LaunchFault makes every offering of a launch it matches fail with Code,
// while it is in force. Empty match fields match any value. The code
// decides what Capstan does (docs/controller.md, "Launch errors"): a capacity
// code (InsufficientInstanceCapacity, ...) marks the offering unavailable;
// AuthFailure.ServiceLinkedRoleCreationNotPermitted marks spot unavailable
// account-wide; any other code (UnauthorizedOperation,
// InvalidParameterValue, ...) is a refusal the NodeClaim records as
// Launched=False and retries until the launch timeout. The local EC2
// endpoint answers each as a CreateFleet error with EC2's message.
type LaunchFault struct {
	// Code is the cloud's error code, EC2's spelling.
	Code string `json:"code"`
	// Message replaces the code's usual message.
	// +optional
	Message string `json:"message,omitempty"`
	// CapacityType, Zone, InstanceType and NodeClass (the SimNodeClass the
	// launch uses; the local EC2 endpoint launches all with one) select
	// the offerings it refuses.
	// +optional
	CapacityType string `json:"capacityType,omitempty"`
	// +optional
	Zone string `json:"zone,omitempty"`
	// +optional
	InstanceType string `json:"instanceType,omitempty"`
	// +optional
	NodeClass string `json:"nodeClass,omitempty"`
	// From and Until bound when it is in force, as offsets from the
	// cloud's start: from (default the start) until until (default the
	// end).
	// +optional
	From *metav1.Duration `json:"from,omitempty"`
	// +optional
	Until *metav1.Duration `json:"until,omitempty"`
	// Count is how many launches it fails at most; unlimited when unset.
	// +optional
	Count *int `json:"count,omitempty"`
}

// CapacityPool is the number of instances of a type a zone can still
// launch with a capacity type.
type CapacityPool struct {
	InstanceType string `json:"instanceType"`
	Zone         string `json:"zone"`
	CapacityType string `json:"capacityType"`
	Count        int    `json:"count"`
}

// SpotPrice is a spot price override; zone "*" means every zone.
type SpotPrice struct {
	InstanceType string `json:"instanceType"`
	Zone         string `json:"zone"`
	Price        string `json:"price"`
}

// Reservation is a capacity reservation in the simulated account.
type Reservation struct {
	ID           string            `json:"id"`
	InstanceType string            `json:"instanceType"`
	Zone         string            `json:"zone"`
	Count        int               `json:"count"`
	Type         ReservationType   `json:"type"`
	OwnerID      string            `json:"ownerID"`
	Tags         map[string]string `json:"tags,omitempty"`
	// +optional
	StartTime *metav1.Duration `json:"startTime,omitempty"`
	// +optional
	EndTime *metav1.Duration `json:"endTime,omitempty"`
	// CapacityBlock makes the reservation a capacity block: its instances
	// are reclaimed at the end time (announced ScheduledChangeNotice
	// ahead) rather than carrying on as on-demand.
	// +optional
	CapacityBlock bool `json:"capacityBlock,omitempty"`
	// Interruptible makes the reservation an interruptible one, whose
	// owner may reclaim its capacity: launches into it must say so (on
	// AWS, the interruptible-capacity-reservation market type).
	// +optional
	Interruptible bool `json:"interruptible,omitempty"`
}

// CloudEventType is a scripted change in the simulated cloud.
type CloudEventType string

// Cloud event types.
const (
	EventSpotInterruption              = CloudEventType("SpotInterruption")
	EventRebalanceRecommendation       = CloudEventType("RebalanceRecommendation")
	EventScheduledChange               = CloudEventType("ScheduledChange")
	EventInstanceStopping              = CloudEventType("InstanceStopping")
	EventInstanceTerminating           = CloudEventType("InstanceTerminating")
	EventCapacityChange                = CloudEventType("CapacityChange")
	EventSpotPriceChange               = CloudEventType("SpotPriceChange")
	EventReservationExpired            = CloudEventType("ReservationExpired")
	EventReservationConsumedExternally = CloudEventType("ReservationConsumedExternally")
	EventScale                         = CloudEventType("Scale")
	// EventKubeletStop stops the matching instances' kubelets without a
	// notice: the instances run on, their nodes stop reporting and go
	// NotReady (Unknown in a cluster).
	EventKubeletStop = CloudEventType("KubeletStop")
	// EventInstanceStop stops the matching instances without a notice, as
	// a user stopping an EC2 instance or deallocating an Azure VM does
	// (seed 000, "Deallocation"): listed as stopped, their nodes NotReady.
	EventInstanceStop = CloudEventType("InstanceStop")
)

// CloudEvent is one scripted event. Which fields matter depends on Type:
// interruptions pick instances by type and zone (or InstanceID), capacity
// and price changes name a pool, reservation events a ReservationID, and
// Scale a workload's Replicas.
type CloudEvent struct {
	At           metav1.Duration `json:"at"`
	Type         CloudEventType  `json:"type"`
	InstanceType string          `json:"instanceType,omitempty"`
	Zone         string          `json:"zone,omitempty"`
	CapacityType string          `json:"capacityType,omitempty"`
	InstanceID   string          `json:"instanceID,omitempty"`
	// Count is a CapacityChange's new count, a
	// ReservationConsumedExternally's slots, and how many of the matching
	// instances (in instance id order) a KubeletStop or InstanceStop
	// stops (unset: all).
	// +optional
	Count *int `json:"count,omitempty"`
	// +optional
	Price         string `json:"price,omitempty"`
	ReservationID string `json:"reservationID,omitempty"`
	// Workload names a Deployment (namespace/name) for Scale.
	Workload string `json:"workload,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
}
