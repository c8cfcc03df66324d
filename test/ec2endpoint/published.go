package ec2endpoint

import (
	"slices"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
)

// networkLimit is a type's network as EC2 describes it: interfaces in
// all, IPv4 addresses per interface, the interfaces each network card
// takes (by card index), the default card, and the hypervisor ("" for
// bare metal).
type networkLimit struct {
	enis, ips   int
	cards       []int
	defaultCard int
	hypervisor  string
}

// published is what EC2's DescribeInstanceTypes says of a type beyond the
// catalog's vCPUs, memory, architecture and prices: its accelerators by
// kind, EFA interfaces, local NVMe, virtualization, generation, CPU
// maker, bandwidths. Zero fields fall back to instanceTypeInfo's rules.
type published struct {
	gpu    *gpuDeviceXML
	neuron *neuronDeviceXML
	// efa is NetworkInfo.EfaInfo.MaximumEfaInterfaces.
	efa int
	// storageGB is the local NVMe instance store in all.
	storageGB int
	// virtualization are SupportedVirtualizationTypes; nil is hvm only.
	virtualization []string
	// architectures are SupportedArchitectures; nil is the catalog's.
	architectures []string
	previous      bool
	// cpu is ProcessorInfo.Manufacturer.
	cpu string
	// network is NetworkInfo.NetworkPerformance.
	network string
	// ebsMbps are EbsOptimizedInfo's baseline and maximum bandwidth.
	ebsMbps [2]int
}

// nvidia describes count NVIDIA GPUs named as EC2 names them.
func nvidia(name string, count int, memMiB int64) *gpuDeviceXML {
	return &gpuDeviceXML{Name: name, Manufacturer: "NVIDIA", Count: count, MemoryInfo: sizeInMiBXML{SizeInMiB: memMiB}}
}

// gpuNames are the names EC2's GpuInfo gives the catalog's GPUs (the
// catalog keeps them lowercase): "T4", "A10G" as in the reference's
// pkg/fake/zz_generated.describe_instance_types.go (v1.14.1), the others
// as AWS's accelerated computing instance specifications write them.
func gpuNames() map[string]string {
	return map[string]string{"t4": "T4", "a10g": "A10G", "t4g": "T4g", "l4": "L4", "l40s": "L40S", "a100": "A100", "h100": "H100"}
}

// publishedTypes are the published facts of the catalog's types that
// instanceTypeInfo's rules do not derive, and of the extraTypes. Sources:
// the reference's pkg/fake/zz_generated.describe_instance_types.go
// (v1.14.1, generated from DescribeInstanceTypes: dl1.24xlarge,
// g4ad.16xlarge, g4dn.8xlarge, g5.12xlarge, inf2.xlarge, inf2.24xlarge,
// trn1.2xlarge, whose GPU memory 22888 MiB for the A10G is EC2's), and
// AWS's EC2 instance type specifications (docs.aws.amazon.com/ec2/latest/
// instancetypes: accelerated computing, network specifications, instance
// store, previous generation) for the rest.
func publishedTypes() map[string]published {
	out := map[string]published{
		"g4dn.8xlarge":  {efa: 1, storageGB: 900},
		"g4dn.xlarge":   {storageGB: 125},
		"g4dn.2xlarge":  {storageGB: 225},
		"g4dn.4xlarge":  {storageGB: 225},
		"g4dn.12xlarge": {efa: 1, storageGB: 900},
		"g4dn.16xlarge": {efa: 1, storageGB: 900},
		"g4dn.metal":    {efa: 1, storageGB: 1800},
		"p4d.24xlarge":  {efa: 4, storageGB: 8000, network: "4x 100 Gigabit"},
		"p4de.24xlarge": {efa: 4, storageGB: 8000, network: "4x 100 Gigabit"},
		"p5.48xlarge":   {efa: 32, storageGB: 30400, network: "3200 Gigabit"},
	}
	for size, gb := range map[string]int{"xlarge": 250, "2xlarge": 450, "4xlarge": 600, "8xlarge": 900, "12xlarge": 3800, "16xlarge": 1900, "24xlarge": 3800, "48xlarge": 7600} {
		out["g5."+size] = published{storageGB: gb}
		out["g6e."+size] = published{storageGB: gb}
	}
	for size, gb := range map[string]int{"xlarge": 250, "2xlarge": 450, "4xlarge": 600, "8xlarge": 900, "12xlarge": 3760, "16xlarge": 1880, "24xlarge": 3760, "48xlarge": 7520} {
		out["g6."+size] = published{storageGB: gb}
	}
	// EFA interfaces per type: AWS's "Elastic Fabric Adapter supported
	// instance types" (docs.aws.amazon.com/AWSEC2/latest/UserGuide/
	// efa.html) and its accelerated computing network specifications;
	// g5.12xlarge's 1 is also the reference's fake DescribeInstanceTypes
	// data's. The smaller sizes take none.
	for name, efa := range map[string]int{
		"g5.8xlarge": 1, "g5.12xlarge": 1, "g5.16xlarge": 1, "g5.24xlarge": 1, "g5.48xlarge": 1,
		"g6.8xlarge": 1, "g6.12xlarge": 1, "g6.16xlarge": 1, "g6.24xlarge": 1, "g6.48xlarge": 1,
		"g6e.8xlarge": 1, "g6e.12xlarge": 1, "g6e.16xlarge": 1, "g6e.24xlarge": 2, "g6e.48xlarge": 4,
	} {
		p := out[name]
		p.efa = efa
		out[name] = p
	}
	for _, x := range extraTypes() {
		out[x.Name] = x.published
	}
	return out
}

// extraType is a type the endpoint serves beyond the catalog: the
// accelerators the catalog has no kind for (AMD and Habana GPUs, AWS
// Neuron), types with several network cards, and a paravirtual
// previous-generation type, each with the facts the simulated cloud
// needs to launch it (its pod limit the VPC CNI's on the default card).
type extraType struct {
	catalog.InstanceType
	published
}

// extraSpotDiscount is the extra types' default spot saving, the
// catalog's most common.
const extraSpotDiscount = 0.6

// extraTypes are served with the catalog (Options.Catalog nil), all
// x86_64. Prices are the us-east-1 on-demand Linux list prices, the same
// in every region of the catalog's.
func extraTypes() []extraType {
	x := func(name string, vcpu int, memMiB int64, usd float64, p published) extraType {
		family, size, category, generation, _ := catalog.ParseName(name)
		it := catalog.InstanceType{Name: name, Family: family, Category: category, Generation: generation, Size: size, Architecture: catalog.ArchAMD64,
			VCPU: vcpu, MemoryMiB: memMiB, Prices: map[string]float64{}, SpotDiscount: extraSpotDiscount}
		for _, r := range catalog.Regions() {
			it.Prices[r] = usd
		}
		n := networkLimits()[name]
		it.MaxPods = n.cards[n.defaultCard]*(n.ips-1) + 2
		return extraType{InstanceType: it, published: p}
	}
	inferentia2 := func(count int) *neuronDeviceXML {
		return &neuronDeviceXML{Name: "Inferentia2", Count: count, CoreInfo: neuronCoreXML{Count: 2, Version: 2}, MemoryInfo: sizeInMiBXML{SizeInMiB: 32768}}
	}
	trainium := func(count int) *neuronDeviceXML {
		return &neuronDeviceXML{Name: "Trainium", Count: count, CoreInfo: neuronCoreXML{Count: 2, Version: 2}, MemoryInfo: sizeInMiBXML{SizeInMiB: 32768}}
	}
	return []extraType{
		x("c6in.32xlarge", 128, 262144, 7.2576, published{efa: 2, cpu: "Intel", network: "200 Gigabit", ebsMbps: [2]int{80000, 80000}}),
		x("dl1.24xlarge", 96, 786432, 13.10904, published{
			gpu: &gpuDeviceXML{Name: "Gaudi HL-205", Manufacturer: "Habana", Count: 8, MemoryInfo: sizeInMiBXML{SizeInMiB: 32768}},
			efa: 4, storageGB: 4000, cpu: "Intel", network: "4x 100 Gigabit", ebsMbps: [2]int{19000, 19000}}),
		x("g4ad.16xlarge", 64, 262144, 3.468, published{
			gpu:       &gpuDeviceXML{Name: "Radeon Pro V520", Manufacturer: "AMD", Count: 4, MemoryInfo: sizeInMiBXML{SizeInMiB: 8192}},
			storageGB: 2400, cpu: "AMD", network: "25 Gigabit", ebsMbps: [2]int{6300, 6300}}),
		x("inf1.xlarge", 4, 8192, 0.228, published{
			neuron: &neuronDeviceXML{Name: "Inferentia", Count: 1, CoreInfo: neuronCoreXML{Count: 4, Version: 1}, MemoryInfo: sizeInMiBXML{SizeInMiB: 8192}},
			cpu:    "Intel", network: "Up to 25 Gigabit", ebsMbps: [2]int{1190, 4750}}),
		x("inf2.24xlarge", 96, 393216, 6.49063, published{neuron: inferentia2(6), cpu: "AMD", network: "50 Gigabit", ebsMbps: [2]int{30000, 30000}}),
		x("inf2.xlarge", 4, 16384, 0.7582, published{neuron: inferentia2(1), cpu: "AMD", network: "Up to 15 Gigabit", ebsMbps: [2]int{1250, 10000}}),
		// Xen, paravirtual only, 32 or 64 bits: an HVM image does not run
		// on it, so a provider must filter types to hvm (the reference
		// does).
		x("t1.micro", 1, 627, 0.02, published{virtualization: []string{"paravirtual"}, architectures: []string{"i386", "x86_64"}, previous: true, cpu: "Intel", network: "Very Low"}),
		x("trn1.2xlarge", 8, 32768, 1.34375, published{neuron: trainium(1), storageGB: 474, cpu: "Intel", network: "Up to 12.5 Gigabit", ebsMbps: [2]int{5000, 20000}}),
		x("trn1.32xlarge", 128, 524288, 21.5, published{neuron: trainium(16), efa: 8, storageGB: 7600, cpu: "Intel", network: "800 Gigabit", ebsMbps: [2]int{80000, 80000}}),
	}
}

// servedCatalog is the embedded catalog and the extraTypes, by name.
func servedCatalog() ([]catalog.InstanceType, error) {
	types, err := catalog.Load()
	if err != nil {
		return nil, err
	}
	for _, x := range extraTypes() {
		types = append(types, x.InstanceType)
	}
	slices.SortFunc(types, func(a, b catalog.InstanceType) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return types, nil
}

// acceleratorCapacity are the extended resources the device plugins of a
// type's node advertise, by kind and maker, as each plugin names them:
// NVIDIA's k8s-device-plugin nvidia.com/gpu, AMD's amd.com/gpu, the
// Neuron plugin aws.amazon.com/neuron (devices) and
// aws.amazon.com/neuroncore, Habana's habana.ai/gaudi, the EFA plugin
// vpc.amazonaws.com/efa.
func acceleratorCapacity(p published) map[string]int64 {
	out := map[string]int64{}
	if g := p.gpu; g != nil {
		switch g.Manufacturer {
		case "NVIDIA":
			out["nvidia.com/gpu"] = int64(g.Count)
		case "AMD":
			out["amd.com/gpu"] = int64(g.Count)
		case "Habana":
			out["habana.ai/gaudi"] = int64(g.Count)
		}
	}
	if n := p.neuron; n != nil {
		out["aws.amazon.com/neuron"] = int64(n.Count)
		out["aws.amazon.com/neuroncore"] = int64(n.Count * n.CoreInfo.Count)
	}
	if p.efa > 0 {
		out["vpc.amazonaws.com/efa"] = int64(p.efa)
	}
	return out
}

// publishedOf is t's published facts: table's, with the catalog's GPUs
// under EC2's names.
func publishedOf(t catalog.InstanceType, table map[string]published) published {
	p := table[t.Name]
	if p.gpu == nil && t.GPUCount > 0 {
		mem := t.GPUMemoryMiB
		if t.GPUName == "a10g" {
			mem = 22888
		}
		p.gpu = nvidia(gpuNames()[t.GPUName], t.GPUCount, mem)
	}
	return p
}
