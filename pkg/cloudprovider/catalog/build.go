package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// gpuManufacturer is the vendor of every GPU in the catalog.
const gpuManufacturer = "nvidia"

// Generate renders the catalog as the exact bytes of instancetypes.json:
// one type per line, sorted by name, so a diff shows whole types.
// `go run ./hack/catalog` writes it; a test compares it with the embedded
// file, so the facts in families_*.go and the file cannot drift apart.
func Generate() ([]byte, error) {
	types := build()
	if err := validateAll(types); err != nil {
		return nil, fmt.Errorf("building the catalog, %w", err)
	}
	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i, t := range types {
		line, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("encoding instance type %s, %w", t.Name, err)
		}
		buf.Write(line)
		if i < len(types)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("]\n")
	return buf.Bytes(), nil
}

// regionPriceMultipliers scales a us-east-1 price to each region, the way
// AWS list prices roughly differ (us-west-2 at par, Europe and Tokyo
// dearer). Its keys are the catalog's regions.
func regionPriceMultipliers() map[string]float64 {
	return map[string]float64{
		"us-east-1":      1,
		"us-east-2":      1,
		"us-west-2":      1,
		"eu-west-1":      1.115,
		"eu-central-1":   1.2,
		"ap-northeast-1": 1.29,
	}
}

// eni is a size's network limit, which bounds its pods under the VPC CNI.
type eni struct {
	interfaces, ipsPerInterface int
}

// maxPods is the VPC CNI formula: every interface keeps its primary
// address, and host-network pods (aws-node, kube-proxy) need none.
func (e eni) maxPods() int {
	return e.interfaces*(e.ipsPerInterface-1) + 2
}

// nitroENI is the limit most Nitro sizes with vcpu CPUs have; families
// that differ list their exceptions.
func nitroENI(vcpu int) eni {
	switch {
	case vcpu <= 1:
		return eni{2, 4}
	case vcpu <= 2:
		return eni{3, 10}
	case vcpu <= 8:
		return eni{4, 15}
	case vcpu <= 48:
		return eni{8, 30}
	default:
		return eni{15, 50}
	}
}

// cpuFamily is a family without GPUs whose sizes scale linearly: price and
// memory are proportional to vCPUs, as in AWS's own price lists.
type cpuFamily struct {
	name         string
	arch         string
	spotDiscount float64
	usdPerVCPU   float64 // us-east-1 on-demand
	mibPerVCPU   int64
	metalVCPU    int // vCPUs of the metal size, if listed
	sizes        []string
	enis         map[string]eni // sizes whose limit differs from nitroENI
}

// gpuFamily is a family with GPUs; its sizes are listed one by one
// because GPU count, CPU and price do not scale together.
type gpuFamily struct {
	name         string
	arch         string
	spotDiscount float64
	gpuName      string
	gpuMemoryMiB int64
	sizes        []gpuSize
}

// gpuSize is one size of a gpuFamily.
type gpuSize struct {
	name      string
	vcpu      int
	memoryGiB int64
	gpus      int
	usd       float64 // us-east-1 on-demand
	enis      eni     // zero for nitroENI
}

// build expands every family into instance types sorted by name.
func build() []InstanceType {
	var types []InstanceType
	for _, f := range cpuFamilies() {
		for _, size := range f.sizes {
			vcpu := sizeVCPU(size, f.metalVCPU)
			e, ok := f.enis[size]
			if !ok {
				e = nitroENI(vcpu)
			}
			usd := f.usdPerVCPU * float64(vcpu)
			t := newType(f.name, size, f.arch, f.spotDiscount, vcpu, f.mibPerVCPU*int64(vcpu), e, usd)
			types = append(types, t)
		}
	}
	for _, f := range gpuFamilies() {
		for _, s := range f.sizes {
			e := s.enis
			if e == (eni{}) {
				e = nitroENI(s.vcpu)
			}
			t := newType(f.name, s.name, f.arch, f.spotDiscount, s.vcpu, s.memoryGiB*1024, e, s.usd)
			t.GPUName, t.GPUManufacturer, t.GPUCount, t.GPUMemoryMiB = f.gpuName, gpuManufacturer, s.gpus, f.gpuMemoryMiB
			types = append(types, t)
		}
	}
	slices.SortFunc(types, func(a, b InstanceType) int { return strings.Compare(a.Name, b.Name) })
	return types
}

// newType fills the fields every type has; usd is the us-east-1 price.
func newType(family, size, arch string, spotDiscount float64, vcpu int, memoryMiB int64, e eni, usd float64) InstanceType {
	name := family + "." + size
	// A malformed family leaves category and generation empty, which
	// Validate then reports with the name.
	_, _, category, generation, _ := ParseName(name)
	prices := map[string]float64{}
	for region, m := range regionPriceMultipliers() {
		prices[region] = roundPrice(usd * m)
	}
	return InstanceType{
		Name: name, Family: family, Category: category, Generation: generation, Size: size,
		Architecture: arch, VCPU: vcpu, MemoryMiB: memoryMiB, MaxPods: e.maxPods(),
		Prices: prices, SpotDiscount: spotDiscount,
	}
}

// roundPrice rounds to a hundredth of a cent, the precision of AWS's
// price lists.
func roundPrice(usd float64) float64 {
	return math.Round(usd*1e4) / 1e4
}

// sizeVCPU is the vCPU count AWS's size names encode: medium 1, large 2,
// xlarge 4, Nxlarge 4N; metal has the family's metalVCPU. It returns 0
// for an unknown name, which Validate rejects.
func sizeVCPU(size string, metalVCPU int) int {
	switch size {
	case "medium":
		return 1
	case "large":
		return 2
	case "xlarge":
		return 4
	case "metal":
		return metalVCPU
	}
	n, err := strconv.Atoi(strings.TrimSuffix(size, "xlarge"))
	if err != nil || !strings.HasSuffix(size, "xlarge") || n <= 0 {
		return 0
	}
	return 4 * n
}
