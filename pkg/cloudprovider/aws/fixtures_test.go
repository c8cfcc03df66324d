package aws

import (
	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// fixture is the part of an InstanceTypeInfo that shapes a node.
type fixture struct {
	arch, cpuMaker, hypervisor string
	ghz                        float64
	vcpus                      int32
	mib                        int64
	cards                      []int32 // ENIs per network card, the default (0) first
	ipv4                       int32
	efa                        int32
	nvmeGB                     int64
	ebsMbps                    int32
	encryptionInTransit        bool
	gpu                        *ec2types.GpuDeviceInfo
	neuron                     *ec2types.NeuronDeviceInfo
}

func gpu(name, maker string, count, mib int32) *ec2types.GpuDeviceInfo {
	return &ec2types.GpuDeviceInfo{Name: awssdk.String(name), Manufacturer: awssdk.String(maker), Count: awssdk.Int32(count), MemoryInfo: &ec2types.GpuDeviceMemoryInfo{SizeInMiB: awssdk.Int32(mib)}}
}

func neuron(name string, count, cores int32) *ec2types.NeuronDeviceInfo {
	return &ec2types.NeuronDeviceInfo{Name: awssdk.String(name), Count: awssdk.Int32(count), CoreInfo: &ec2types.NeuronDeviceCoreInfo{Count: awssdk.Int32(cores)}}
}

// fixtures are real types as EC2 describes them: the first ten from the
// reference's pkg/fake/zz_generated.describe_instance_types.go (v1.14.1),
// the network cards of the last four from its
// pkg/providers/instancetype/zz_generated.vpclimits.go (their other fields
// from AWS's published specifications: p5.48xlarge 8 H100 and 32 EFA,
// p4d.24xlarge 8 A100 and 4 EFA, trn1.32xlarge 16 Trainium with 2 cores
// and 8 EFA, c6in.32xlarge 128 vCPU and 2 EFA).
var fixtures = map[string]fixture{
	"c6g.large":      {arch: "arm64", cpuMaker: "AWS", hypervisor: "nitro", ghz: 2.5, vcpus: 2, mib: 4096, cards: []int32{3}, ipv4: 10, ebsMbps: 4750},
	"dl1.24xlarge":   {arch: "x86_64", cpuMaker: "Intel", hypervisor: "nitro", ghz: 3, vcpus: 96, mib: 786432, cards: []int32{15, 15, 15, 15}, ipv4: 50, efa: 4, nvmeGB: 4000, ebsMbps: 19000, encryptionInTransit: true, gpu: gpu("Gaudi HL-205", "Habana", 8, 32768)},
	"g4ad.16xlarge":  {arch: "x86_64", cpuMaker: "AMD", hypervisor: "nitro", ghz: 3, vcpus: 64, mib: 262144, cards: []int32{8}, ipv4: 30, nvmeGB: 2400, ebsMbps: 6300, encryptionInTransit: true, gpu: gpu("Radeon Pro V520", "AMD", 4, 8192)},
	"g4dn.8xlarge":   {arch: "x86_64", cpuMaker: "Intel", hypervisor: "nitro", ghz: 2.5, vcpus: 32, mib: 131072, cards: []int32{4}, ipv4: 15, efa: 1, nvmeGB: 900, ebsMbps: 9500, encryptionInTransit: true, gpu: gpu("T4", "NVIDIA", 1, 16384)},
	"inf2.xlarge":    {arch: "x86_64", cpuMaker: "AMD", hypervisor: "nitro", ghz: 3.6, vcpus: 4, mib: 16384, cards: []int32{4}, ipv4: 15, ebsMbps: 10000, encryptionInTransit: true, neuron: neuron("Inferentia2", 1, 2)},
	"m5.large":       {arch: "x86_64", cpuMaker: "Intel", hypervisor: "nitro", ghz: 3.1, vcpus: 2, mib: 8192, cards: []int32{3}, ipv4: 10, ebsMbps: 4750},
	"m5.metal":       {arch: "x86_64", cpuMaker: "Intel", hypervisor: "", ghz: 3.1, vcpus: 96, mib: 393216, cards: []int32{15}, ipv4: 50, ebsMbps: 19000},
	"m5.xlarge":      {arch: "x86_64", cpuMaker: "Intel", hypervisor: "nitro", ghz: 3.1, vcpus: 4, mib: 16384, cards: []int32{4}, ipv4: 15, ebsMbps: 4750},
	"m7i-flex.large": {arch: "x86_64", cpuMaker: "Intel", hypervisor: "nitro", ghz: 3.2, vcpus: 2, mib: 8192, cards: []int32{3}, ipv4: 10, ebsMbps: 10000, encryptionInTransit: true},
	"t3.large":       {arch: "x86_64", cpuMaker: "Intel", hypervisor: "nitro", ghz: 2.5, vcpus: 2, mib: 8192, cards: []int32{3}, ipv4: 12, ebsMbps: 2780},
	"trn1.2xlarge":   {arch: "x86_64", cpuMaker: "Intel", hypervisor: "nitro", ghz: 3.5, vcpus: 8, mib: 32768, cards: []int32{4}, ipv4: 15, nvmeGB: 474, ebsMbps: 20000, encryptionInTransit: true, neuron: neuron("Trainium", 1, 2)},
	"p5.48xlarge":    {arch: "x86_64", cpuMaker: "AMD", hypervisor: "nitro", vcpus: 192, mib: 2097152, cards: repeat(2, 32), ipv4: 50, efa: 32, encryptionInTransit: true, gpu: gpu("H100", "NVIDIA", 8, 81920)},
	"p4d.24xlarge":   {arch: "x86_64", cpuMaker: "Intel", hypervisor: "nitro", vcpus: 96, mib: 1179648, cards: repeat(15, 4), ipv4: 50, efa: 4, encryptionInTransit: true, gpu: gpu("A100", "NVIDIA", 8, 40960)},
	"trn1.32xlarge":  {arch: "x86_64", cpuMaker: "Intel", hypervisor: "nitro", vcpus: 128, mib: 524288, cards: repeat(5, 8), ipv4: 50, efa: 8, encryptionInTransit: true, neuron: neuron("Trainium", 16, 2)},
	"c6in.32xlarge":  {arch: "x86_64", cpuMaker: "Intel", hypervisor: "nitro", vcpus: 128, mib: 262144, cards: repeat(8, 2), ipv4: 50, efa: 2, encryptionInTransit: true},
}

func repeat(enis int32, cards int) []int32 {
	out := make([]int32, cards)
	for i := range out {
		out[i] = enis
	}
	return out
}

// describe is the fixture as DescribeInstanceTypes returns it.
func describe(name string) ec2types.InstanceTypeInfo {
	f, ok := fixtures[name]
	if !ok {
		panic("no fixture " + name)
	}
	total := int32(0)
	var cards []ec2types.NetworkCardInfo
	for i, n := range f.cards {
		total += n
		cards = append(cards, ec2types.NetworkCardInfo{NetworkCardIndex: awssdk.Int32(int32(i)), MaximumNetworkInterfaces: awssdk.Int32(n)})
	}
	info := ec2types.InstanceTypeInfo{
		InstanceType:                 ec2types.InstanceType(name),
		SupportedUsageClasses:        []ec2types.UsageClassType{"on-demand", "spot"},
		SupportedVirtualizationTypes: []ec2types.VirtualizationType{"hvm"},
		Hypervisor:                   ec2types.InstanceTypeHypervisor(f.hypervisor),
		ProcessorInfo: &ec2types.ProcessorInfo{Manufacturer: awssdk.String(f.cpuMaker), SupportedArchitectures: []ec2types.ArchitectureType{ec2types.ArchitectureType(f.arch)},
			SustainedClockSpeedInGhz: awssdk.Float64(f.ghz)},
		VCpuInfo:   &ec2types.VCpuInfo{DefaultVCpus: awssdk.Int32(f.vcpus)},
		MemoryInfo: &ec2types.MemoryInfo{SizeInMiB: awssdk.Int64(f.mib)},
		NetworkInfo: &ec2types.NetworkInfo{MaximumNetworkInterfaces: awssdk.Int32(total), Ipv4AddressesPerInterface: awssdk.Int32(f.ipv4),
			EncryptionInTransitSupported: awssdk.Bool(f.encryptionInTransit), DefaultNetworkCardIndex: awssdk.Int32(0), NetworkCards: cards},
	}
	if f.ebsMbps > 0 {
		info.EbsInfo = &ec2types.EbsInfo{EbsOptimizedSupport: "default", EbsOptimizedInfo: &ec2types.EbsOptimizedInfo{MaximumBandwidthInMbps: awssdk.Int32(f.ebsMbps)}}
	}
	if f.efa > 0 {
		info.NetworkInfo.EfaInfo = &ec2types.EfaInfo{MaximumEfaInterfaces: awssdk.Int32(f.efa)}
	}
	if f.nvmeGB > 0 {
		info.InstanceStorageInfo = &ec2types.InstanceStorageInfo{NvmeSupport: "required", TotalSizeInGB: awssdk.Int64(f.nvmeGB)}
	}
	if f.gpu != nil {
		info.GpuInfo = &ec2types.GpuInfo{Gpus: []ec2types.GpuDeviceInfo{*f.gpu}}
	}
	if f.neuron != nil {
		info.NeuronInfo = &ec2types.NeuronInfo{NeuronDevices: []ec2types.NeuronDeviceInfo{*f.neuron}}
	}
	return info
}
