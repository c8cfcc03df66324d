package v1

// Labels Capstan sets on Nodes and NodeClaims, or reads from users.
const (
	NodePoolLabelKey        = Group + "/nodepool"
	CapacityTypeLabelKey    = Group + "/capacity-type"
	NodeRegisteredLabelKey  = Group + "/registered"
	NodeInitializedLabelKey = Group + "/initialized"
	DoNotSyncTaintsLabelKey = Group + "/do-not-sync-taints"

	// InterruptibleLabelKey marks spot nodes the way Cluster API does, so
	// existing termination handlers find them (decision 7).
	InterruptibleLabelKey = "cluster.x-k8s.io/interruptible"
	// ControlPlaneLabelKey marks control-plane nodes; such nodes never run
	// on spot (decision 8).
	ControlPlaneLabelKey = "node-role.kubernetes.io/control-plane"
)

// Capacity types, in the order a NodeClaim tries them.
const (
	CapacityTypeReserved = "reserved"
	CapacityTypeSpot     = "spot"
	CapacityTypeOnDemand = "on-demand"
)

// Values of LabelCapacityReservationType.
const (
	ReservationTypeDefault       = "default"
	ReservationTypeCapacityBlock = "capacity-block"
)

// Well-known Kubernetes node labels.
const (
	LabelHostname     = "kubernetes.io/hostname"
	LabelArch         = "kubernetes.io/arch"
	LabelOS           = "kubernetes.io/os"
	LabelInstanceType = "node.kubernetes.io/instance-type"
	LabelZone         = "topology.kubernetes.io/zone"
	LabelRegion       = "topology.kubernetes.io/region"
)

// Instance labels under the AWS provider's domain that workloads (and the
// llmaz flavors of seed 001) select on.
const (
	awsGroup                     = "karpenter.k8s.aws"
	LabelInstanceCategory        = awsGroup + "/instance-category"
	LabelInstanceFamily          = awsGroup + "/instance-family"
	LabelInstanceGeneration      = awsGroup + "/instance-generation"
	LabelInstanceSize            = awsGroup + "/instance-size"
	LabelInstanceCPU             = awsGroup + "/instance-cpu"
	LabelInstanceMemory          = awsGroup + "/instance-memory"
	LabelInstanceGPUName         = awsGroup + "/instance-gpu-name"
	LabelInstanceGPUCount        = awsGroup + "/instance-gpu-count"
	LabelInstanceGPUManufacturer = awsGroup + "/instance-gpu-manufacturer"
	LabelInstanceGPUMemory       = awsGroup + "/instance-gpu-memory"
	LabelCapacityReservationID   = awsGroup + "/capacity-reservation-id"
	// LabelCapacityReservationType is a reserved node's reservation
	// type (ReservationTypeDefault or ReservationTypeCapacityBlock), and
	// LabelCapacityReservationInterruptible whether its owner may reclaim
	// the reservation ("true" or "false"), as the reference AWS provider
	// labels them.
	LabelCapacityReservationType          = awsGroup + "/capacity-reservation-type"
	LabelCapacityReservationInterruptible = awsGroup + "/capacity-reservation-interruptible"
	LabelZoneID                           = "topology.k8s.aws/zone-id"

	// The reference AWS provider's other well-known instance labels
	// (pkg/apis/v1/labels.go at v1.14.1); docs/aws.md, "Instance types".
	LabelInstanceHypervisor                   = awsGroup + "/instance-hypervisor"
	LabelInstanceEncryptionInTransitSupported = awsGroup + "/instance-encryption-in-transit-supported"
	LabelInstanceCapabilityFlex               = awsGroup + "/instance-capability-flex"
	LabelInstanceLocalNVME                    = awsGroup + "/instance-local-nvme"
	LabelInstanceCPUManufacturer              = awsGroup + "/instance-cpu-manufacturer"
	LabelInstanceCPUSustainedClockSpeedMhz    = awsGroup + "/instance-cpu-sustained-clock-speed-mhz"
	LabelInstanceEBSBandwidth                 = awsGroup + "/instance-ebs-bandwidth"
	LabelInstanceNetworkBandwidth             = awsGroup + "/instance-network-bandwidth"
	LabelInstanceAcceleratorName              = awsGroup + "/instance-accelerator-name"
	LabelInstanceAcceleratorManufacturer      = awsGroup + "/instance-accelerator-manufacturer"
	LabelInstanceAcceleratorCount             = awsGroup + "/instance-accelerator-count"
	LabelInstanceTenancy                      = awsGroup + "/instance-tenancy"
	LabelPlacementGroupID                     = awsGroup + "/placement-group-id"
	LabelPlacementGroupPartition              = awsGroup + "/placement-group-partition"
	// LabelWindowsBuild is a Windows node's build, a Kubernetes label the
	// reference counts as well known.
	LabelWindowsBuild = "node.kubernetes.io/windows-build"
)

// Annotations.
const (
	DoNotDisruptAnnotationKey                  = Group + "/do-not-disrupt"
	NodePoolHashAnnotationKey                  = Group + "/nodepool-hash"
	NodePoolHashVersionAnnotationKey           = Group + "/nodepool-hash-version"
	NodeClaimTerminationTimestampAnnotationKey = Group + "/nodeclaim-termination-timestamp"
	// NodeClaimMinValuesRelaxedAnnotationKey says ("true"/"false") whether
	// a NodeClaim of a NodePool with minValues was launched with fewer
	// (--min-values-policy=BestEffort).
	NodeClaimMinValuesRelaxedAnnotationKey = Group + "/nodeclaim-min-values-relaxed"

	// BudgetTimeZoneAnnotationKey is Capstan's extension naming the IANA time
	// zone of a NodePool's budget schedules (decision 14); default UTC.
	BudgetTimeZoneAnnotationKey = "capstan.dev/budget-timezone"
	// RebalanceAnnotationKey is Capstan's extension saying what a
	// NodePool does on a rebalance recommendation (decision 17):
	// RebalanceReplace replaces the node ahead of time within the Drifted
	// budget; unset or RebalanceEvent, the recommendation is an event only.
	RebalanceAnnotationKey = "capstan.dev/rebalance"
	RebalanceReplace       = "replace"
	RebalanceEvent         = "event"
	// ReturnToPreferredAnnotationKey is Capstan's extension (decision 17)
	// saying whether a NodePool's nodes launched as a fallback (on-demand
	// because spot was unavailable) return to their preferred capacity
	// once it is launchable again: Enabled (the default) or Disabled.
	// ReturnToPreferredAfterAnnotationKey is how long the preferred
	// offering must have been available first (a duration, default 10m).
	ReturnToPreferredAnnotationKey      = "capstan.dev/return-to-preferred"
	ReturnToPreferredAfterAnnotationKey = "capstan.dev/return-to-preferred-after"
	ReturnToPreferredEnabled            = "Enabled"
	ReturnToPreferredDisabled           = "Disabled"
	// ConsolidationThresholdAnnotationKey is Capstan's extension setting
	// the lowest score a Balanced NodePool's consolidation move must
	// reach: a positive decimal ("0.5", the reference's 1/k with k=2, by
	// default; docs/disruption.md, "Balanced consolidation").
	ConsolidationThresholdAnnotationKey = "capstan.dev/consolidation-threshold"
	// RepairBudgetAnnotationKey is Capstan's extension bounding how many
	// of a NodePool's nodes are repaired (replaced for a node condition
	// its cloud provider's repair policies name) at once: a count or a
	// percentage of its nodes, rounded up (default 20%, the reference's
	// breaker). RepairMaxUnhealthyAnnotationKey is the breaker: with more
	// of its nodes unhealthy than that, none is repaired (default: the
	// repair budget). docs/disruption.md, "Node repair".
	RepairBudgetAnnotationKey       = "capstan.dev/repair-budget"
	RepairMaxUnhealthyAnnotationKey = "capstan.dev/repair-max-unhealthy"
	// ReturnAttemptsAnnotationKey and ReturnNotBeforeAnnotationKey record
	// on a fallback NodeClaim how many returns to preferred capacity
	// failed for want of capacity, and when the next may start (RFC 3339):
	// each failure doubles the wait.
	ReturnAttemptsAnnotationKey  = "capstan.dev/return-attempts"
	ReturnNotBeforeAnnotationKey = "capstan.dev/return-not-before"
)

// Taint keys and the finalizer.
const (
	DisruptedTaintKey    = Group + "/disrupted"
	UnregisteredTaintKey = Group + "/unregistered"
	TerminationFinalizer = Group + "/termination"
)
