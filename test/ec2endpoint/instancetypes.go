package ec2endpoint

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

type describeInstanceTypesResponse struct {
	responseMeta
	InstanceTypes []instanceTypeXML `xml:"instanceTypeSet>item"`
	NextToken     string            `xml:"nextToken,omitempty"`
}

type instanceTypeXML struct {
	InstanceType                  string              `xml:"instanceType"`
	CurrentGeneration             bool                `xml:"currentGeneration"`
	FreeTierEligible              bool                `xml:"freeTierEligible"`
	SupportedUsageClasses         []string            `xml:"supportedUsageClasses>item"`
	SupportedRootDeviceTypes      []string            `xml:"supportedRootDeviceTypes>item"`
	SupportedVirtualizationTypes  []string            `xml:"supportedVirtualizationTypes>item"`
	BareMetal                     bool                `xml:"bareMetal"`
	Hypervisor                    string              `xml:"hypervisor,omitempty"`
	ProcessorInfo                 processorInfoXML    `xml:"processorInfo"`
	VCPUInfo                      vcpuInfoXML         `xml:"vCpuInfo"`
	MemoryInfo                    sizeInMiBXML        `xml:"memoryInfo"`
	InstanceStorageSupported      bool                `xml:"instanceStorageSupported"`
	InstanceStorageInfo           *instanceStorageXML `xml:"instanceStorageInfo,omitempty"`
	EBSInfo                       ebsInfoXML          `xml:"ebsInfo"`
	NetworkInfo                   networkInfoXML      `xml:"networkInfo"`
	GPUInfo                       *gpuInfoXML         `xml:"gpuInfo,omitempty"`
	NeuronInfo                    *neuronInfoXML      `xml:"neuronInfo,omitempty"`
	BurstablePerformanceSupported bool                `xml:"burstablePerformanceSupported"`
	SupportedBootModes            []string            `xml:"supportedBootModes>item"`
}

type processorInfoXML struct {
	SupportedArchitectures []string `xml:"supportedArchitectures>item"`
	Manufacturer           string   `xml:"manufacturer"`
}

type vcpuInfoXML struct {
	DefaultVCPUs          int `xml:"defaultVCpus"`
	DefaultCores          int `xml:"defaultCores"`
	DefaultThreadsPerCore int `xml:"defaultThreadsPerCore"`
}

type sizeInMiBXML struct {
	SizeInMiB int64 `xml:"sizeInMiB"`
}

type instanceStorageXML struct {
	TotalSizeInGB int           `xml:"totalSizeInGB"`
	Disks         []diskInfoXML `xml:"disks>item"`
	NVMeSupport   string        `xml:"nvmeSupport"`
}

type diskInfoXML struct {
	SizeInGB int    `xml:"sizeInGB"`
	Count    int    `xml:"count"`
	Type     string `xml:"type"`
}

type ebsInfoXML struct {
	EBSOptimizedInfo    *ebsOptimizedInfoXML `xml:"ebsOptimizedInfo,omitempty"`
	EBSOptimizedSupport string               `xml:"ebsOptimizedSupport"`
	EncryptionSupport   string               `xml:"encryptionSupport"`
	NVMeSupport         string               `xml:"nvmeSupport"`
}

type networkInfoXML struct {
	NetworkPerformance           string           `xml:"networkPerformance"`
	MaximumNetworkInterfaces     int              `xml:"maximumNetworkInterfaces"`
	MaximumNetworkCards          int              `xml:"maximumNetworkCards"`
	DefaultNetworkCardIndex      int              `xml:"defaultNetworkCardIndex"`
	NetworkCards                 []networkCardXML `xml:"networkCards>item"`
	IPv4AddressesPerInterface    int              `xml:"ipv4AddressesPerInterface"`
	IPv6AddressesPerInterface    int              `xml:"ipv6AddressesPerInterface"`
	IPv6Supported                bool             `xml:"ipv6Supported"`
	ENASupport                   string           `xml:"enaSupport"`
	EFASupported                 bool             `xml:"efaSupported"`
	EFAInfo                      *efaInfoXML      `xml:"efaInfo,omitempty"`
	EncryptionInTransitSupported bool             `xml:"encryptionInTransitSupported"`
}

type efaInfoXML struct {
	MaximumEFAInterfaces int `xml:"maximumEfaInterfaces"`
}

type ebsOptimizedInfoXML struct {
	BaselineBandwidthInMbps int `xml:"baselineBandwidthInMbps"`
	MaximumBandwidthInMbps  int `xml:"maximumBandwidthInMbps"`
}

type networkCardXML struct {
	NetworkCardIndex         int    `xml:"networkCardIndex"`
	NetworkPerformance       string `xml:"networkPerformance"`
	MaximumNetworkInterfaces int    `xml:"maximumNetworkInterfaces"`
}

type gpuInfoXML struct {
	GPUs                []gpuDeviceXML `xml:"gpus>item"`
	TotalGPUMemoryInMiB int64          `xml:"totalGpuMemoryInMiB"`
}

type neuronInfoXML struct {
	Devices          []neuronDeviceXML `xml:"neuronDevices>item"`
	TotalMemoryInMiB int64             `xml:"totalNeuronDeviceMemoryInMiB"`
}

type neuronDeviceXML struct {
	Name       string        `xml:"name"`
	Count      int           `xml:"count"`
	CoreInfo   neuronCoreXML `xml:"coreInfo"`
	MemoryInfo sizeInMiBXML  `xml:"memoryInfo"`
}

type neuronCoreXML struct {
	Count   int `xml:"count"`
	Version int `xml:"version"`
}

type gpuDeviceXML struct {
	Name         string       `xml:"name"`
	Manufacturer string       `xml:"manufacturer"`
	Count        int          `xml:"count"`
	MemoryInfo   sizeInMiBXML `xml:"memoryInfo"`
}

// describeInstanceTypes serves the catalog's types sold in the region.
// Without MaxResults a page holds 100 types, as EC2's does, so the SDK's
// paginator pages through the catalog.
func (s *Server) describeInstanceTypes(_ context.Context, p params) (response, error) {
	fs, err := p.filters([]string{
		"instance-type", "current-generation", "bare-metal", "burstable-performance-supported", "hypervisor",
		"instance-storage-supported", "processor-info.supported-architecture", "processor-info.manufacturer",
		"supported-usage-class", "supported-virtualization-type", "vcpu-info.default-vcpus", "memory-info.size-in-mib",
	}, false)
	if err != nil {
		return nil, err
	}
	want := p.list("InstanceType")
	var unknown []string
	for _, name := range want {
		if _, ok := s.byName[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		return nil, errorf("InvalidInstanceType", "The following supplied instance types do not exist: [%s]", strings.Join(unknown, ", "))
	}
	var out []instanceTypeXML
	for _, t := range s.types {
		info := s.typeInfo[t.Name]
		if len(want) > 0 && !slices.Contains(want, t.Name) || !matches(fs, info.resource()) {
			continue
		}
		out = append(out, info)
	}
	items, next, err := page(p, out, pageLimits{min: 5, max: 100, def: 100})
	if err != nil {
		return nil, err
	}
	return &describeInstanceTypesResponse{InstanceTypes: items, NextToken: next}, nil
}

func (it instanceTypeXML) resource() resource {
	b := strconv.FormatBool
	return resource{fields: map[string][]string{
		"instance-type":                         {it.InstanceType},
		"current-generation":                    {b(it.CurrentGeneration)},
		"bare-metal":                            {b(it.BareMetal)},
		"burstable-performance-supported":       {b(it.BurstablePerformanceSupported)},
		"hypervisor":                            {it.Hypervisor},
		"instance-storage-supported":            {b(it.InstanceStorageSupported)},
		"processor-info.supported-architecture": it.ProcessorInfo.SupportedArchitectures,
		"processor-info.manufacturer":           {it.ProcessorInfo.Manufacturer},
		"supported-usage-class":                 it.SupportedUsageClasses,
		"supported-virtualization-type":         it.SupportedVirtualizationTypes,
		"vcpu-info.default-vcpus":               {strconv.Itoa(it.VCPUInfo.DefaultVCPUs)},
		"memory-info.size-in-mib":               {strconv.FormatInt(it.MemoryInfo.SizeInMiB, 10)},
	}}
}

// instanceTypeInfo describes a catalog type as EC2 does: its network
// (interfaces, network cards, default card, hypervisor) as AWS publishes
// it (networkLimits), its accelerators, EFA, local NVMe, virtualization
// and generation as published (publishedOf), and the rest by EC2's rules
// for the family: t families are burstable; families with the d
// attribute not in the table have local NVMe, synthesized at 30 GB per
// vCPU; Graviton is AWS's CPU and g5, g6, g6e and p5 run AMD's; c, m and
// r families before the fifth are a previous generation.
func instanceTypeInfo(t catalog.InstanceType, n networkLimit, p published) instanceTypeXML {
	threads := 2
	if t.Architecture == catalog.ArchARM64 || t.VCPU == 1 {
		threads = 1
	}
	perf := cmpOr(p.network, networkPerformance(t.VCPU))
	xen := n.hypervisor == "xen"
	// Xen c4 and m4 are a previous generation, as is the table's t1.
	previous := p.previous || slices.Contains([]string{"c", "m", "r"}, t.Category) && t.Generation <= 4
	it := instanceTypeXML{
		InstanceType:                  t.Name,
		CurrentGeneration:             !previous,
		SupportedUsageClasses:         []string{"on-demand", "spot"},
		SupportedRootDeviceTypes:      []string{"ebs"},
		SupportedVirtualizationTypes:  []string{"hvm"},
		BareMetal:                     n.hypervisor == "",
		Hypervisor:                    n.hypervisor,
		ProcessorInfo:                 processorInfoXML{SupportedArchitectures: []string{architecture(t.Architecture)}, Manufacturer: cmpOr(p.cpu, cpuManufacturer(t))},
		VCPUInfo:                      vcpuInfoXML{DefaultVCPUs: t.VCPU, DefaultCores: t.VCPU / threads, DefaultThreadsPerCore: threads},
		MemoryInfo:                    sizeInMiBXML{SizeInMiB: t.MemoryMiB},
		EBSInfo:                       ebsInfoXML{EBSOptimizedSupport: "default", EncryptionSupport: "supported", NVMeSupport: "required"},
		BurstablePerformanceSupported: t.Category == "t" && !p.previous,
		SupportedBootModes:            []string{"legacy-bios", "uefi"},
		NetworkInfo: networkInfoXML{
			NetworkPerformance: perf, MaximumNetworkInterfaces: n.enis, MaximumNetworkCards: len(n.cards), DefaultNetworkCardIndex: n.defaultCard,
			IPv4AddressesPerInterface: n.ips, IPv6AddressesPerInterface: n.ips, IPv6Supported: !xen, ENASupport: "required",
			EFASupported: p.efa > 0, EncryptionInTransitSupported: !xen && n.hypervisor != "",
		},
	}
	for i, enis := range n.cards {
		card := networkCardXML{NetworkCardIndex: i, MaximumNetworkInterfaces: enis}
		if len(n.cards) == 1 {
			// A card's share of a multi-card type's bandwidth is not in
			// the published data the endpoint keeps.
			card.NetworkPerformance = perf
		}
		it.NetworkInfo.NetworkCards = append(it.NetworkInfo.NetworkCards, card)
	}
	if p.efa > 0 {
		it.NetworkInfo.EFAInfo = &efaInfoXML{MaximumEFAInterfaces: p.efa}
	}
	if p.virtualization != nil {
		it.SupportedVirtualizationTypes = p.virtualization
	}
	if p.architectures != nil {
		it.ProcessorInfo.SupportedArchitectures = p.architectures
	}
	switch {
	case p.previous:
		it.EBSInfo.EBSOptimizedSupport, it.EBSInfo.NVMeSupport, it.NetworkInfo.ENASupport = "unsupported", "unsupported", "unsupported"
		it.SupportedBootModes = []string{"legacy-bios"}
	case xen:
		it.EBSInfo.NVMeSupport, it.NetworkInfo.ENASupport = "unsupported", "supported"
	}
	if p.ebsMbps[1] > 0 {
		it.EBSInfo.EBSOptimizedInfo = &ebsOptimizedInfoXML{BaselineBandwidthInMbps: p.ebsMbps[0], MaximumBandwidthInMbps: p.ebsMbps[1]}
	}
	if t.Architecture == catalog.ArchARM64 {
		it.SupportedBootModes = []string{"uefi"}
	}
	size := p.storageGB
	if size == 0 && strings.Contains(strings.TrimLeft(strings.TrimPrefix(t.Family, t.Category), "0123456789"), "d") {
		size = 30 * t.VCPU
	}
	if size > 0 {
		it.InstanceStorageSupported = true
		it.InstanceStorageInfo = &instanceStorageXML{TotalSizeInGB: size, Disks: []diskInfoXML{{SizeInGB: size, Count: 1, Type: "ssd"}}, NVMeSupport: "required"}
	}
	if g := p.gpu; g != nil {
		it.GPUInfo = &gpuInfoXML{GPUs: []gpuDeviceXML{*g}, TotalGPUMemoryInMiB: int64(g.Count) * g.MemoryInfo.SizeInMiB}
	}
	if d := p.neuron; d != nil {
		it.NeuronInfo = &neuronInfoXML{Devices: []neuronDeviceXML{*d}, TotalMemoryInMiB: int64(d.Count) * d.MemoryInfo.SizeInMiB}
	}
	return it
}

func cpuManufacturer(t catalog.InstanceType) string {
	switch {
	case t.Architecture == catalog.ArchARM64:
		return "AWS"
	case slices.Contains([]string{"g5", "g6", "g6e", "p5"}, t.Family):
		return "AMD"
	}
	return "Intel"
}

// networkPerformance is a synthesized bandwidth class by size.
func networkPerformance(vcpu int) string {
	switch {
	case vcpu <= 16:
		return "Up to 10 Gigabit"
	case vcpu <= 32:
		return "10 Gigabit"
	case vcpu <= 64:
		return "25 Gigabit"
	}
	return "50 Gigabit"
}

type describeInstanceTypeOfferingsResponse struct {
	responseMeta
	Offerings []instanceTypeOfferingXML `xml:"instanceTypeOfferingSet>item"`
	NextToken string                    `xml:"nextToken,omitempty"`
}

type instanceTypeOfferingXML struct {
	InstanceType string `xml:"instanceType"`
	LocationType string `xml:"locationType"`
	Location     string `xml:"location"`
}

// describeInstanceTypeOfferings: the simulated cloud offers every type in
// every zone of the profile (a pool at count 0 is still offered; it fails
// at launch, as EC2's do).
func (s *Server) describeInstanceTypeOfferings(_ context.Context, p params) (response, error) {
	fs, err := p.filters([]string{"instance-type", "location"}, false)
	if err != nil {
		return nil, err
	}
	locationType := p.get("LocationType")
	var locations []string
	switch locationType {
	case "", "region":
		locationType, locations = "region", []string{s.profile.Spec.Region}
	case "availability-zone":
		locations = s.profile.Spec.Zones
	case "availability-zone-id":
		for _, z := range s.profile.Spec.Zones {
			locations = append(locations, s.zoneID(z))
		}
	default:
		return nil, errorf("InvalidParameterValue", "Value (%s) for parameter locationType is invalid. Valid values: region, availability-zone, availability-zone-id", locationType)
	}
	var out []instanceTypeOfferingXML
	for _, t := range s.types {
		for _, loc := range locations {
			o := instanceTypeOfferingXML{InstanceType: t.Name, LocationType: locationType, Location: loc}
			if matches(fs, resource{fields: map[string][]string{"instance-type": {t.Name}, "location": {loc}}}) {
				out = append(out, o)
			}
		}
	}
	items, next, err := page(p, out, pageLimits{min: 5, max: 1000, def: 1000})
	if err != nil {
		return nil, err
	}
	return &describeInstanceTypeOfferingsResponse{Offerings: items, NextToken: next}, nil
}

type describeAvailabilityZonesResponse struct {
	responseMeta
	Zones []availabilityZoneXML `xml:"availabilityZoneInfo>item"`
}

type availabilityZoneXML struct {
	ZoneName           string `xml:"zoneName"`
	ZoneID             string `xml:"zoneId"`
	ZoneState          string `xml:"zoneState"`
	RegionName         string `xml:"regionName"`
	ZoneType           string `xml:"zoneType"`
	GroupName          string `xml:"groupName"`
	NetworkBorderGroup string `xml:"networkBorderGroup"`
	OptInStatus        string `xml:"optInStatus"`
}

// zoneID is a zone's ID as the simulated cloud labels its nodes.
func (s *Server) zoneID(zone string) string { return sim.ZoneID(&s.profile.Spec, zone) }

func (s *Server) describeAvailabilityZones(_ context.Context, p params) (response, error) {
	fs, err := p.filters([]string{"zone-name", "zone-id", "region-name", "state", "zone-type", "group-name", "opt-in-status"}, false)
	if err != nil {
		return nil, err
	}
	names, ids := p.list("ZoneName"), p.list("ZoneId")
	for _, n := range names {
		if s.zoneIndex(n) < 0 {
			return nil, errorf("InvalidParameterValue", "The zone '%s' does not exist in region %s", n, s.profile.Spec.Region)
		}
	}
	resp := &describeAvailabilityZonesResponse{}
	for _, z := range s.profile.Spec.Zones {
		az := availabilityZoneXML{
			ZoneName: z, ZoneID: s.zoneID(z), ZoneState: "available", RegionName: s.profile.Spec.Region, ZoneType: "availability-zone",
			GroupName: s.profile.Spec.Region, NetworkBorderGroup: s.profile.Spec.Region, OptInStatus: "opt-in-not-required",
		}
		r := resource{fields: map[string][]string{
			"zone-name": {az.ZoneName}, "zone-id": {az.ZoneID}, "region-name": {az.RegionName}, "state": {az.ZoneState},
			"zone-type": {az.ZoneType}, "group-name": {az.GroupName}, "opt-in-status": {az.OptInStatus},
		}}
		if len(names) > 0 && !slices.Contains(names, z) || len(ids) > 0 && !slices.Contains(ids, az.ZoneID) || !matches(fs, r) {
			continue
		}
		resp.Zones = append(resp.Zones, az)
	}
	return resp, nil
}

type describeSpotPriceHistoryResponse struct {
	responseMeta
	Prices    []spotPriceXML `xml:"spotPriceHistorySet>item"`
	NextToken string         `xml:"nextToken,omitempty"`
}

type spotPriceXML struct {
	InstanceType       string `xml:"instanceType"`
	ProductDescription string `xml:"productDescription"`
	SpotPrice          string `xml:"spotPrice"`
	Timestamp          string `xml:"timestamp"`
	AvailabilityZone   string `xml:"availabilityZone"`
	AvailabilityZoneID string `xml:"availabilityZoneId"`
}

// linuxProducts are the product descriptions the simulated cloud prices:
// Linux only, the same price inside a VPC or not.
func linuxProducts() []string { return []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"} }

// describeSpotPriceHistory reports each pool's current spot price, the
// one the simulated cloud launches at (the profile's prices, moved by
// its SpotPriceChange events), stamped now: the history holds no more
// than the present.
func (s *Server) describeSpotPriceHistory(ctx context.Context, p params) (response, error) {
	fs, err := p.filters([]string{"availability-zone", "instance-type", "product-description", "spot-price"}, false)
	if err != nil {
		return nil, err
	}
	types, zone := p.list("InstanceType"), p.get("AvailabilityZone")
	products := p.list("ProductDescription")
	if len(products) == 0 {
		products = linuxProducts()[:1]
	}
	prices, err := s.cloud.Prices(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading spot prices, %w", err)
	}
	now := timestamp(s.opts.Clock.Now())
	var out []spotPriceXML
	for _, pr := range prices {
		if len(types) > 0 && !slices.Contains(types, pr.InstanceType) || zone != "" && zone != pr.Zone {
			continue
		}
		for _, product := range products {
			if !slices.Contains(linuxProducts(), product) {
				continue
			}
			sp := spotPriceXML{
				InstanceType: pr.InstanceType, ProductDescription: product, SpotPrice: strconv.FormatFloat(pr.Spot, 'f', 6, 64),
				Timestamp: now, AvailabilityZone: pr.Zone, AvailabilityZoneID: s.zoneID(pr.Zone),
			}
			r := resource{fields: map[string][]string{
				"availability-zone": {sp.AvailabilityZone}, "instance-type": {sp.InstanceType},
				"product-description": {sp.ProductDescription}, "spot-price": {sp.SpotPrice},
			}}
			if matches(fs, r) {
				out = append(out, sp)
			}
		}
	}
	items, next, err := page(p, out, pageLimits{min: 5, max: 1000, def: 1000})
	if err != nil {
		return nil, err
	}
	return &describeSpotPriceHistoryResponse{Prices: items, NextToken: next}, nil
}
