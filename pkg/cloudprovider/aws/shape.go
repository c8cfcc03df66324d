package aws

import (
	"math"
	"slices"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Extended resources the device plugins of AWS nodes advertise, as the
// reference names them (pkg/apis/v1/labels.go).
const (
	ResourceNVIDIAGPU     corev1.ResourceName = "nvidia.com/gpu"
	ResourceAMDGPU        corev1.ResourceName = "amd.com/gpu"
	ResourceAWSNeuron     corev1.ResourceName = "aws.amazon.com/neuron"
	ResourceAWSNeuronCore corev1.ResourceName = "aws.amazon.com/neuroncore"
	ResourceHabanaGaudi   corev1.ResourceName = "habana.ai/gaudi"
	ResourceEFA           corev1.ResourceName = "vpc.amazonaws.com/efa"
)

// defaultMaxPods is the kubelet's own pod limit, which families that do
// not size pods by ENIs (Windows) keep.
const defaultMaxPods = 110

// familyFeatures are what an AMI family's nodes do with the kubelet
// settings that shape a node (the reference's amifamily FeatureFlags).
type familyFeatures struct {
	// eniLimitedMemoryOverhead: kube-reserved memory follows the ENI
	// limit whatever maxPods says (nodeadm and bootstrap.sh do so).
	eniLimitedMemoryOverhead bool
	// podsPerCore: the family passes podsPerCore to the kubelet.
	podsPerCore bool
	// eniLimitedPodDensity: the default pod limit is the ENI limit.
	eniLimitedPodDensity bool
}

// featuresOf is family's features: Bottlerocket reserves memory for its
// own pod limit and has no podsPerCore setting
// (pkg/providers/amifamily/bottlerocket.go); Windows keeps the kubelet's
// 110 pods (windows.go); AL2, AL2023 and Custom follow the ENI limit
// throughout (resolver.go DefaultFamily).
func featuresOf(family string) familyFeatures {
	switch family {
	case awsv1.AMIFamilyBottlerocket:
		return familyFeatures{eniLimitedPodDensity: true}
	case awsv1.AMIFamilyWindows2019, awsv1.AMIFamilyWindows2022, awsv1.AMIFamilyWindows2025:
		return familyFeatures{podsPerCore: true}
	}
	return familyFeatures{eniLimitedMemoryOverhead: true, podsPerCore: true, eniLimitedPodDensity: true}
}

// eniLimitedPods is the VPC CNI's pod limit on the type, as the reference
// computes it (instancetype/types.go ENILimitedPods): the ENIs of the
// default network card only (the CNI attaches none on the others) less
// those reserved for other uses (--reserved-enis) and less the class's
// EFA-only interfaces on network card 0 (they take an ENI slot but carry
// no IP addresses), times the IPv4 addresses per ENI less its primary,
// plus 2 for host-network pods. No usable ENI: 0.
func eniLimitedPods(info ec2types.InstanceTypeInfo, reservedENIs int, nics []awsv1.NetworkInterface) int64 {
	n := info.NetworkInfo
	if n == nil {
		return defaultMaxPods
	}
	efaOnly := int64(countEFAOnly(nics, func(nic awsv1.NetworkInterface) bool { return nic.NetworkCardIndex == 0 }))
	usable := max(int64(defaultCardENIs(n))-int64(reservedENIs)-efaOnly, 0)
	if usable == 0 {
		return 0
	}
	return usable*(int64(awssdk.ToInt32(n.Ipv4AddressesPerInterface))-1) + 2
}

// countEFAOnly is the EFA-only interfaces among nics that keep holds.
func countEFAOnly(nics []awsv1.NetworkInterface, keep func(awsv1.NetworkInterface) bool) int {
	count := 0
	for _, nic := range nics {
		if nic.InterfaceType == awsv1.InterfaceTypeEFAOnly && keep(nic) {
			count++
		}
	}
	return count
}

// defaultCardENIs is the network interfaces of the default network card;
// a type described without cards has one, with all the interfaces.
func defaultCardENIs(n *ec2types.NetworkInfo) int32 {
	index := awssdk.ToInt32(n.DefaultNetworkCardIndex)
	if i := slices.IndexFunc(n.NetworkCards, func(c ec2types.NetworkCardInfo) bool { return awssdk.ToInt32(c.NetworkCardIndex) == index }); i >= 0 {
		return awssdk.ToInt32(n.NetworkCards[i].MaximumNetworkInterfaces)
	}
	return awssdk.ToInt32(n.MaximumNetworkInterfaces)
}

// maxPods is the pods a node of the type runs (instancetype/types.go
// pods): kubelet.maxPods when set, else the ENI limit (110 where the
// family does not size pods by ENIs), capped by podsPerCore × vCPUs where
// the family honours podsPerCore.
func maxPods(info ec2types.InstanceTypeInfo, family string, k *awsv1.KubeletConfiguration, reservedENIs int, nics []awsv1.NetworkInterface) int64 {
	f := featuresOf(family)
	var pods int64
	switch {
	case k != nil && k.MaxPods != nil:
		pods = int64(*k.MaxPods)
	case f.eniLimitedPodDensity:
		pods = eniLimitedPods(info, reservedENIs, nics)
	default:
		pods = defaultMaxPods
	}
	if k != nil && k.PodsPerCore != nil && *k.PodsPerCore > 0 && f.podsPerCore {
		pods = min(pods, int64(*k.PodsPerCore)*int64(vcpus(info)))
	}
	return pods
}

// reservedPods is the pod count kube-reserved memory is sized for: the
// ENI limit (with no ENI reserved) on families whose bootstrap does so,
// else the node's pod limit (instancetype/types.go NewInstanceType).
func reservedPods(info ec2types.InstanceTypeInfo, family string, k *awsv1.KubeletConfiguration, reservedENIs int, nics []awsv1.NetworkInterface) int64 {
	if featuresOf(family).eniLimitedMemoryOverhead {
		return eniLimitedPods(info, 0, nics)
	}
	return maxPods(info, family, k, reservedENIs, nics)
}

func vcpus(info ec2types.InstanceTypeInfo) int32 {
	if info.VCpuInfo == nil {
		return 0
	}
	return awssdk.ToInt32(info.VCpuInfo.DefaultVCpus)
}

// memoryMiB is the memory the node sees (instancetype/types.go memory):
// SizeInMiB, less 64 MiB of CMA on Graviton (arm64 first), less the VM
// overhead share rounded up.
func memoryMiB(info ec2types.InstanceTypeInfo, vmOverhead float64) int64 {
	if info.MemoryInfo == nil {
		return 0
	}
	size := awssdk.ToInt64(info.MemoryInfo.SizeInMiB)
	if p := info.ProcessorInfo; p != nil && len(p.SupportedArchitectures) > 0 && p.SupportedArchitectures[0] == ec2types.ArchitectureTypeArm64 {
		size -= 64
	}
	// Bytes × share / MiB, in this order, as the reference rounds it.
	return size - int64(math.Ceil(float64(size<<20)*vmOverhead/1024/1024))
}

// ephemeralStorage is the node's ephemeral storage
// (instancetype/types.go ephemeralStorage): with instanceStorePolicy
// RAID0 the instance store's total (decimal GB, as EC2 states it), else
// the root volume's size.
func ephemeralStorage(info ec2types.InstanceTypeInfo, nc *awsv1.EC2NodeClass) resource.Quantity {
	if p := nc.Spec.InstanceStorePolicy; p != nil && *p == awsv1.InstanceStorePolicyRAID0 {
		if s := info.InstanceStorageInfo; s != nil && s.TotalSizeInGB != nil {
			return *resource.NewScaledQuantity(*s.TotalSizeInGB, resource.Giga)
		}
	}
	return rootVolumeSize(nc)
}

// devices are the type's extended resources by kind and maker
// (instancetype/types.go nvidiaGPUs, amdGPUs, habanaGaudis,
// awsNeuronDevices, awsNeuronCores, efas); kinds it has none of are left
// out. A class that sets networkInterfaces gets the EFA-only interfaces it
// attaches as EFA devices, not all the type could take.
func devices(info ec2types.InstanceTypeInfo, nics []awsv1.NetworkInterface) corev1.ResourceList {
	counts := map[corev1.ResourceName]int64{}
	if info.GpuInfo != nil {
		for _, g := range info.GpuInfo.Gpus {
			switch awssdk.ToString(g.Manufacturer) {
			case "NVIDIA":
				counts[ResourceNVIDIAGPU] += int64(awssdk.ToInt32(g.Count))
			case "AMD":
				counts[ResourceAMDGPU] += int64(awssdk.ToInt32(g.Count))
			case "Habana":
				counts[ResourceHabanaGaudi] += int64(awssdk.ToInt32(g.Count))
			}
		}
	}
	if info.NeuronInfo != nil && len(info.NeuronInfo.NeuronDevices) > 0 {
		for _, d := range info.NeuronInfo.NeuronDevices {
			counts[ResourceAWSNeuron] += int64(awssdk.ToInt32(d.Count))
		}
		// Cores as the reference counts them: the first device kind's.
		if d := info.NeuronInfo.NeuronDevices[0]; d.CoreInfo != nil {
			counts[ResourceAWSNeuronCore] = int64(awssdk.ToInt32(d.Count)) * int64(awssdk.ToInt32(d.CoreInfo.Count))
		}
	}
	if nics != nil {
		counts[ResourceEFA] = int64(countEFAOnly(nics, func(awsv1.NetworkInterface) bool { return true }))
	} else if n := info.NetworkInfo; n != nil && n.EfaInfo != nil {
		counts[ResourceEFA] = int64(awssdk.ToInt32(n.EfaInfo.MaximumEfaInterfaces))
	}
	out := corev1.ResourceList{}
	for name, n := range counts {
		if n > 0 {
			out[name] = *resource.NewQuantity(n, resource.DecimalSI)
		}
	}
	return out
}

// capacity is what a node of the type launched from nc has.
func capacity(info ec2types.InstanceTypeInfo, nc *awsv1.EC2NodeClass, opts Options) corev1.ResourceList {
	rl := devices(info, nc.Spec.NetworkInterfaces)
	rl[corev1.ResourceCPU] = *resource.NewQuantity(int64(vcpus(info)), resource.DecimalSI)
	rl[corev1.ResourceMemory] = *resource.NewQuantity(memoryMiB(info, opts.VMMemoryOverheadPercent)<<20, resource.BinarySI)
	rl[corev1.ResourceEphemeralStorage] = ephemeralStorage(info, nc)
	rl[corev1.ResourcePods] = *resource.NewQuantity(maxPods(info, nc.AMIFamily(), nc.Spec.Kubelet, opts.ReservedENIs, nc.Spec.NetworkInterfaces), resource.DecimalSI)
	return rl
}

// instanceType is info as nodes launched from nc see it, without
// offerings: its labels as requirements, capacity and overhead, each
// computed as the reference computes it (docs/aws.md, "Instance types:
// how capacity, overhead and labels are computed"); bandwidth is
// networkBandwidths'.
func instanceType(info ec2types.InstanceTypeInfo, nc *awsv1.EC2NodeClass, opts Options, bandwidth map[string]int64) *cloudprovider.InstanceType {
	rl := capacity(info, nc, opts)
	return &cloudprovider.InstanceType{
		Name:         string(info.InstanceType),
		Requirements: requirements(info, opts.Region, nc.AMIFamily(), bandwidth),
		Capacity:     rl,
		Overhead:     overhead(info, nc, rl, opts.ReservedENIs),
	}
}
