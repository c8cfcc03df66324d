package scheduling

import (
	"k8s.io/apimachinery/pkg/util/sets"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// IsWellKnown reports whether the cloud provider or Capstan sets key on a
// node (instance type, zone, capacity type, ...), rather than the workload
// or the NodePool template. Callers typically pass these keys to
// Requirements.Compatible as allowed-undefined: a NodeClaim that leaves the
// zone open still gets one at launch. A switch, so that the hot path needs
// no shared set.
func IsWellKnown(key string) bool {
	switch key {
	case v1.LabelInstanceType, v1.LabelZone, v1.LabelRegion, v1.LabelArch, v1.LabelOS,
		v1.LabelHostname, v1.CapacityTypeLabelKey, v1.NodePoolLabelKey,
		v1.LabelInstanceCategory, v1.LabelInstanceFamily, v1.LabelInstanceGeneration,
		v1.LabelInstanceSize, v1.LabelInstanceCPU, v1.LabelInstanceMemory,
		v1.LabelInstanceGPUName, v1.LabelInstanceGPUCount, v1.LabelInstanceGPUManufacturer,
		v1.LabelInstanceGPUMemory, v1.LabelCapacityReservationID, v1.LabelZoneID,
		v1.LabelCapacityReservationType, v1.LabelCapacityReservationInterruptible,
		v1.LabelInstanceHypervisor, v1.LabelInstanceEncryptionInTransitSupported, v1.LabelInstanceCapabilityFlex,
		v1.LabelInstanceLocalNVME, v1.LabelInstanceCPUManufacturer, v1.LabelInstanceCPUSustainedClockSpeedMhz,
		v1.LabelInstanceEBSBandwidth, v1.LabelInstanceNetworkBandwidth, v1.LabelInstanceAcceleratorName,
		v1.LabelInstanceAcceleratorManufacturer, v1.LabelInstanceAcceleratorCount, v1.LabelInstanceTenancy,
		v1.LabelPlacementGroupID, v1.LabelPlacementGroupPartition, v1.LabelWindowsBuild:
		return true
	}
	return false
}

// WellKnownLabels returns a new set of the keys IsWellKnown accepts.
func WellKnownLabels() sets.Set[string] {
	return sets.New(
		v1.LabelInstanceType, v1.LabelZone, v1.LabelRegion, v1.LabelArch, v1.LabelOS,
		v1.LabelHostname, v1.CapacityTypeLabelKey, v1.NodePoolLabelKey,
		v1.LabelInstanceCategory, v1.LabelInstanceFamily, v1.LabelInstanceGeneration,
		v1.LabelInstanceSize, v1.LabelInstanceCPU, v1.LabelInstanceMemory,
		v1.LabelInstanceGPUName, v1.LabelInstanceGPUCount, v1.LabelInstanceGPUManufacturer,
		v1.LabelInstanceGPUMemory, v1.LabelCapacityReservationID, v1.LabelZoneID,
		v1.LabelCapacityReservationType, v1.LabelCapacityReservationInterruptible,
		v1.LabelInstanceHypervisor, v1.LabelInstanceEncryptionInTransitSupported, v1.LabelInstanceCapabilityFlex,
		v1.LabelInstanceLocalNVME, v1.LabelInstanceCPUManufacturer, v1.LabelInstanceCPUSustainedClockSpeedMhz,
		v1.LabelInstanceEBSBandwidth, v1.LabelInstanceNetworkBandwidth, v1.LabelInstanceAcceleratorName,
		v1.LabelInstanceAcceleratorManufacturer, v1.LabelInstanceAcceleratorCount, v1.LabelInstanceTenancy,
		v1.LabelPlacementGroupID, v1.LabelPlacementGroupPartition, v1.LabelWindowsBuild,
	)
}

// InstanceTypeLabels are the well-known labels that describe an instance
// type itself rather than an offering of it (zone, capacity type,
// reservation): a provider either gives a type a value for each or
// requires the label absent, as the reference AWS provider does
// (pkg/providers/instancetype/types.go computeRequirements), so that a
// requirement on one filters types that have no value instead of being
// ignored.
func InstanceTypeLabels() []string {
	return []string{
		v1.LabelInstanceCategory, v1.LabelInstanceFamily, v1.LabelInstanceGeneration, v1.LabelInstanceSize,
		v1.LabelInstanceCPU, v1.LabelInstanceMemory, v1.LabelInstanceGPUName, v1.LabelInstanceGPUCount,
		v1.LabelInstanceGPUManufacturer, v1.LabelInstanceGPUMemory,
		v1.LabelInstanceHypervisor, v1.LabelInstanceEncryptionInTransitSupported, v1.LabelInstanceCapabilityFlex,
		v1.LabelInstanceLocalNVME, v1.LabelInstanceCPUManufacturer, v1.LabelInstanceCPUSustainedClockSpeedMhz,
		v1.LabelInstanceEBSBandwidth, v1.LabelInstanceNetworkBandwidth, v1.LabelInstanceAcceleratorName,
		v1.LabelInstanceAcceleratorManufacturer, v1.LabelInstanceAcceleratorCount, v1.LabelInstanceTenancy,
		v1.LabelWindowsBuild,
	}
}
