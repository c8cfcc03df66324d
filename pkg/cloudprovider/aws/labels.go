package aws

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// bandwidthFile is the published baseline network bandwidth per type
// (its "source" field says where it comes from).
const bandwidthFile = "bandwidth.json"

//go:embed bandwidth.json
var bandwidthData embed.FS

// networkBandwidths are each type's baseline network bandwidth in
// Mbit/s, the instance-network-bandwidth label, read from the embedded
// file on first use; types AWS gives only a vague figure for are absent.
// The map is shared: read it only.
var networkBandwidths = sync.OnceValues(func() (map[string]int64, error) {
	raw, err := bandwidthData.ReadFile(bandwidthFile)
	if err != nil {
		return nil, fmt.Errorf("reading %s, %w", bandwidthFile, err)
	}
	return parseBandwidths(raw)
})

// parseBandwidths reads the megabits of a file in bandwidth.json's format.
func parseBandwidths(raw []byte) (map[string]int64, error) {
	var table struct {
		Megabits map[string]int64 `json:"megabits"`
	}
	if err := json.Unmarshal(raw, &table); err != nil {
		return nil, fmt.Errorf("decoding %s, %w", bandwidthFile, err)
	}
	if len(table.Megabits) == 0 {
		return nil, fmt.Errorf("%s lists no bandwidth", bandwidthFile)
	}
	return table.Megabits, nil
}

// typeName splits an instance type name as the reference does
// (instancetype/types.go instanceTypeScheme): category letters, an
// optional "-<n>tb" memory part, then the generation.
var typeName = regexp.MustCompile(`(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.`)

// kubeArchitectures are the EC2 architectures Capstan launches, by their
// kubernetes.io/arch names.
var kubeArchitectures = map[ec2types.ArchitectureType]string{
	ec2types.ArchitectureTypeX8664: "amd64",
	ec2types.ArchitectureTypeArm64: "arm64",
}

// windowsBuilds are the node.kubernetes.io/windows-build values of the
// Windows families.
var windowsBuilds = map[string]string{
	awsv1.AMIFamilyWindows2019: awsv1.Windows2019Build,
	awsv1.AMIFamilyWindows2022: awsv1.Windows2022Build,
	awsv1.AMIFamilyWindows2025: awsv1.Windows2025Build,
}

// requirements are the labels a node of the type carries, as the
// reference's computeRequirements (instancetype/types.go) sets them, less
// the offerings' (zone, capacity type, reservation), which Capstan keeps
// on the offerings: each type-level well-known label has the type's
// value or is required absent. instance-memory is SizeInMiB, before any
// overhead; names are lower kebab case, so they are valid label values.
// bandwidth is networkBandwidths'.
func requirements(info ec2types.InstanceTypeInfo, region, family string, bandwidth map[string]int64) scheduling.Requirements {
	name := string(info.InstanceType)
	values := map[string]string{
		v1.LabelInstanceType: name,
		v1.LabelRegion:       region,
		// Capstan launches default tenancy only (no placement tenancy in
		// its launch templates), so dedicated is not offered.
		v1.LabelInstanceTenancy:    string(ec2types.TenancyDefault),
		v1.LabelInstanceHypervisor: string(info.Hypervisor),
	}
	arch := architecture(info)
	values[v1.LabelArch] = arch
	if info.VCpuInfo != nil {
		values[v1.LabelInstanceCPU] = strconv.Itoa(int(awssdk.ToInt32(info.VCpuInfo.DefaultVCpus)))
	}
	if info.MemoryInfo != nil {
		values[v1.LabelInstanceMemory] = strconv.FormatInt(awssdk.ToInt64(info.MemoryInfo.SizeInMiB), 10)
	}
	if n := info.NetworkInfo; n != nil {
		values[v1.LabelInstanceEncryptionInTransitSupported] = strconv.FormatBool(awssdk.ToBool(n.EncryptionInTransitSupported))
	}
	if parts := typeName.FindStringSubmatch(name); len(parts) == 4 {
		values[v1.LabelInstanceCategory], values[v1.LabelInstanceGeneration] = parts[1], parts[3]
	}
	family1, size, ok := strings.Cut(name, ".")
	if ok && !strings.Contains(size, ".") {
		values[v1.LabelInstanceFamily], values[v1.LabelInstanceSize] = family1, size
	}
	values[v1.LabelInstanceCapabilityFlex] = strconv.FormatBool(strings.Contains(family1, "-flex"))
	if s := info.InstanceStorageInfo; s != nil && s.NvmeSupport != ec2types.EphemeralNvmeSupportUnsupported && s.TotalSizeInGB != nil {
		values[v1.LabelInstanceLocalNVME] = strconv.FormatInt(*s.TotalSizeInGB, 10)
	}
	if mbps, ok := bandwidth[name]; ok {
		values[v1.LabelInstanceNetworkBandwidth] = strconv.FormatInt(mbps, 10)
	}
	if g := info.GpuInfo; g != nil && len(g.Gpus) == 1 {
		gpu := g.Gpus[0]
		values[v1.LabelInstanceGPUName] = kebab(awssdk.ToString(gpu.Name))
		values[v1.LabelInstanceGPUManufacturer] = kebab(awssdk.ToString(gpu.Manufacturer))
		values[v1.LabelInstanceGPUCount] = strconv.Itoa(int(awssdk.ToInt32(gpu.Count)))
		if gpu.MemoryInfo != nil {
			values[v1.LabelInstanceGPUMemory] = strconv.Itoa(int(awssdk.ToInt32(gpu.MemoryInfo.SizeInMiB)))
		}
	}
	accelerators(info, values)
	if p := info.ProcessorInfo; p != nil {
		values[v1.LabelInstanceCPUManufacturer] = kebab(awssdk.ToString(p.Manufacturer))
		values[v1.LabelInstanceCPUSustainedClockSpeedMhz] = strconv.Itoa(int(math.Round(awssdk.ToFloat64(p.SustainedClockSpeedInGhz) * 1000)))
	}
	if e := info.EbsInfo; e != nil && e.EbsOptimizedInfo != nil && e.EbsOptimizedSupport == ec2types.EbsOptimizedSupportDefault {
		values[v1.LabelInstanceEBSBandwidth] = strconv.Itoa(int(awssdk.ToInt32(e.EbsOptimizedInfo.MaximumBandwidthInMbps)))
	}
	reqs := scheduling.Requirements{}
	for key, value := range values {
		reqs.Add(scheduling.NewRequirement(key, corev1.NodeSelectorOpIn, value))
	}
	reqs.Add(scheduling.NewRequirement(v1.LabelOS, corev1.NodeSelectorOpIn, operatingSystems(family, arch)...))
	if build, ok := windowsBuilds[family]; ok {
		reqs.Add(scheduling.NewRequirement(v1.LabelWindowsBuild, corev1.NodeSelectorOpIn, build))
	}
	for _, key := range scheduling.InstanceTypeLabels() {
		if !reqs.Has(key) {
			reqs.Add(scheduling.NewRequirement(key, corev1.NodeSelectorOpDoesNotExist))
		}
	}
	return reqs
}

// accelerators labels the type's one kind of inference accelerator or,
// in its place, its one kind of Neuron device (made by AWS).
func accelerators(info ec2types.InstanceTypeInfo, values map[string]string) {
	if a := info.InferenceAcceleratorInfo; a != nil && len(a.Accelerators) == 1 && info.NeuronInfo == nil {
		acc := a.Accelerators[0]
		values[v1.LabelInstanceAcceleratorName] = kebab(awssdk.ToString(acc.Name))
		values[v1.LabelInstanceAcceleratorManufacturer] = kebab(awssdk.ToString(acc.Manufacturer))
		values[v1.LabelInstanceAcceleratorCount] = strconv.Itoa(int(awssdk.ToInt32(acc.Count)))
	}
	if n := info.NeuronInfo; n != nil && len(n.NeuronDevices) == 1 {
		d := n.NeuronDevices[0]
		values[v1.LabelInstanceAcceleratorName] = kebab(awssdk.ToString(d.Name))
		values[v1.LabelInstanceAcceleratorManufacturer] = "aws"
		values[v1.LabelInstanceAcceleratorCount] = strconv.Itoa(int(awssdk.ToInt32(d.Count)))
	}
}

// architecture is the type's kubernetes.io/arch: the first EC2
// architecture Capstan launches; "" for none (DescribeInstanceTypes is
// filtered to those).
func architecture(info ec2types.InstanceTypeInfo) string {
	if info.ProcessorInfo != nil {
		for _, a := range info.ProcessorInfo.SupportedArchitectures {
			if arch, ok := kubeArchitectures[a]; ok {
				return arch
			}
		}
	}
	return ""
}

// operatingSystems is the kubernetes.io/os the family's nodes run: linux,
// or windows on amd64 (none on arm64) for the Windows families.
func operatingSystems(family, arch string) []string {
	if _, ok := windowsBuilds[family]; ok {
		if arch == "amd64" {
			return []string{string(corev1.Windows)}
		}
		return nil
	}
	return []string{string(corev1.Linux)}
}

// kebab is a name as a label value, as the reference writes it
// (instancetype/types.go lowerKabobCase): lower case, spaces to dashes.
func kebab(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, " ", "-"))
}
