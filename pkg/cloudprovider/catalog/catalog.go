package catalog

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// dataFile is the generated catalog, rewritten by `go run ./hack/catalog`.
const dataFile = "instancetypes.json"

//go:embed instancetypes.json
var data embed.FS

// Architectures and the operating system the catalog's types run.
const (
	ArchAMD64 = "amd64"
	ArchARM64 = "arm64"
	osLinux   = "linux"
)

// InstanceType is one machine shape the simulated cloud can launch. Values
// returned by Load are the caller's own copies.
type InstanceType struct {
	// Name is "<family>.<size>", e.g. "c4.xlarge".
	Name string `json:"name"`
	// Family is the part of Name before the dot, e.g. "c4".
	Family string `json:"family"`
	// Category is the letters that open Family, e.g. "c".
	Category string `json:"category"`
	// Generation is the number that follows Category in Family, e.g. 4.
	Generation int `json:"generation"`
	// Size is the part of Name after the dot, e.g. "xlarge" or "metal".
	Size string `json:"size"`
	// Architecture is a kubernetes.io/arch value: ArchAMD64 or ArchARM64.
	Architecture string `json:"architecture"`
	// VCPU is the number of virtual CPUs.
	VCPU int `json:"vcpu"`
	// MemoryMiB is the instance's memory in MiB, before any reservation.
	MemoryMiB int64 `json:"memoryMiB"`
	// MaxPods is the pod limit of the AWS VPC CNI:
	// ENIs × (IPv4 addresses per ENI − 1) + 2.
	MaxPods int `json:"maxPods"`
	// GPUName is the lowercase accelerator model, e.g. "a10g"; empty
	// without GPUs, like the other GPU fields.
	GPUName string `json:"gpuName,omitempty"`
	// GPUManufacturer is the lowercase GPU vendor, e.g. "nvidia".
	GPUManufacturer string `json:"gpuManufacturer,omitempty"`
	// GPUCount is the number of GPUs.
	GPUCount int `json:"gpuCount,omitempty"`
	// GPUMemoryMiB is the memory of one GPU in MiB, as the
	// instance-gpu-memory label reports it.
	GPUMemoryMiB int64 `json:"gpuMemoryMiB,omitempty"`
	// Prices maps every region of Regions to the on-demand price in USD
	// per hour.
	Prices map[string]float64 `json:"prices"`
	// SpotDiscount is the family's default spot saving as a fraction of
	// the on-demand price: spot costs OnDemand × (1 − SpotDiscount).
	SpotDiscount float64 `json:"spotDiscount"`
}

// Load decodes and validates the embedded catalog. Every call returns new
// values, so callers may modify what they get without affecting others.
func Load() ([]InstanceType, error) {
	raw, err := data.ReadFile(dataFile)
	if err != nil {
		return nil, fmt.Errorf("reading %s, %w", dataFile, err)
	}
	return decode(raw)
}

// decode is Load without the embedded file, so tests can feed bad data.
func decode(raw []byte) ([]InstanceType, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	// A misspelt field would otherwise decode as zero and pass as data.
	dec.DisallowUnknownFields()
	var types []InstanceType
	if err := dec.Decode(&types); err != nil {
		return nil, fmt.Errorf("decoding %s, %w", dataFile, err)
	}
	if err := validateAll(types); err != nil {
		return nil, fmt.Errorf("validating %s, %w", dataFile, err)
	}
	return types, nil
}

// Regions lists, sorted, the regions every instance type is priced in.
func Regions() []string {
	return slices.Sorted(maps.Keys(regionPriceMultipliers()))
}

// OnDemandPrice is the on-demand price in USD per hour in region; false
// when the type is not sold there.
func (t InstanceType) OnDemandPrice(region string) (float64, bool) {
	p, ok := t.Prices[region]
	return p, ok
}

// SpotPrice is the default spot price in USD per hour in region, the
// on-demand price less the family's SpotDiscount; false when the type is
// not sold there.
func (t InstanceType) SpotPrice(region string) (float64, bool) {
	p, ok := t.Prices[region]
	if !ok {
		return 0, false
	}
	return p * (1 - t.SpotDiscount), true
}

// Labels returns, in a new map, the well-known and karpenter.k8s.aws
// labels a node of this type carries; the GPU labels only when it has
// GPUs.
func (t InstanceType) Labels() map[string]string {
	labels := map[string]string{
		v1.LabelInstanceType:       t.Name,
		v1.LabelArch:               t.Architecture,
		v1.LabelOS:                 osLinux,
		v1.LabelInstanceCategory:   t.Category,
		v1.LabelInstanceFamily:     t.Family,
		v1.LabelInstanceGeneration: strconv.Itoa(t.Generation),
		v1.LabelInstanceSize:       t.Size,
		v1.LabelInstanceCPU:        strconv.Itoa(t.VCPU),
		v1.LabelInstanceMemory:     strconv.FormatInt(t.MemoryMiB, 10),
	}
	if t.GPUCount > 0 {
		labels[v1.LabelInstanceGPUName] = t.GPUName
		labels[v1.LabelInstanceGPUCount] = strconv.Itoa(t.GPUCount)
		labels[v1.LabelInstanceGPUManufacturer] = t.GPUManufacturer
		labels[v1.LabelInstanceGPUMemory] = strconv.FormatInt(t.GPUMemoryMiB, 10)
	}
	return labels
}

// Validate reports every field that is missing, out of range or
// inconsistent with Name, joined into one error.
func (t InstanceType) Validate() error {
	var errs []error
	family, size, category, generation, err := ParseName(t.Name)
	if err != nil {
		errs = append(errs, err)
	} else {
		if t.Family != family {
			errs = append(errs, fmt.Errorf("family %q, want %q from the name", t.Family, family))
		}
		if t.Size != size {
			errs = append(errs, fmt.Errorf("size %q, want %q from the name", t.Size, size))
		}
		if t.Category != category {
			errs = append(errs, fmt.Errorf("category %q, want %q from the name", t.Category, category))
		}
		if t.Generation != generation {
			errs = append(errs, fmt.Errorf("generation %d, want %d from the name", t.Generation, generation))
		}
	}
	if t.Architecture != ArchAMD64 && t.Architecture != ArchARM64 {
		errs = append(errs, fmt.Errorf("architecture %q, want %s or %s", t.Architecture, ArchAMD64, ArchARM64))
	}
	if t.VCPU <= 0 {
		errs = append(errs, fmt.Errorf("vcpu %d, want > 0", t.VCPU))
	}
	if t.MemoryMiB <= 0 {
		errs = append(errs, fmt.Errorf("memoryMiB %d, want > 0", t.MemoryMiB))
	}
	if t.MaxPods <= 0 {
		errs = append(errs, fmt.Errorf("maxPods %d, want > 0", t.MaxPods))
	}
	errs = append(errs, t.validateGPU()...)
	errs = append(errs, t.validatePrices()...)
	if t.SpotDiscount <= 0 || t.SpotDiscount >= 1 {
		errs = append(errs, fmt.Errorf("spotDiscount %v, want between 0 and 1 exclusive", t.SpotDiscount))
	}
	if len(errs) > 0 {
		return fmt.Errorf("instance type %q: %w", t.Name, errors.Join(errs...))
	}
	return nil
}

// validateGPU requires the GPU fields all set or all empty, so a label
// selector on one GPU label never matches a type missing another.
func (t InstanceType) validateGPU() []error {
	switch {
	case t.GPUCount < 0:
		return []error{fmt.Errorf("gpuCount %d, want >= 0", t.GPUCount)}
	case t.GPUCount == 0:
		if t.GPUName != "" || t.GPUManufacturer != "" || t.GPUMemoryMiB != 0 {
			return []error{fmt.Errorf("gpuName %q, gpuManufacturer %q, gpuMemoryMiB %d without GPUs, want them empty",
				t.GPUName, t.GPUManufacturer, t.GPUMemoryMiB)}
		}
		return nil
	}
	var errs []error
	if t.GPUName == "" {
		errs = append(errs, fmt.Errorf("gpuName empty with %d GPUs", t.GPUCount))
	}
	if t.GPUManufacturer == "" {
		errs = append(errs, fmt.Errorf("gpuManufacturer empty with %d GPUs", t.GPUCount))
	}
	if t.GPUMemoryMiB <= 0 {
		errs = append(errs, fmt.Errorf("gpuMemoryMiB %d with %d GPUs, want > 0", t.GPUMemoryMiB, t.GPUCount))
	}
	return errs
}

// validatePrices requires a positive price in exactly the catalog's
// regions, so no offering silently disappears from one region.
func (t InstanceType) validatePrices() []error {
	var errs []error
	regions := Regions()
	for _, r := range regions {
		if p, ok := t.Prices[r]; !ok {
			errs = append(errs, fmt.Errorf("no price in region %s", r))
		} else if p <= 0 {
			errs = append(errs, fmt.Errorf("price %v in region %s, want > 0", p, r))
		}
	}
	for _, r := range slices.Sorted(maps.Keys(t.Prices)) {
		if !slices.Contains(regions, r) {
			errs = append(errs, fmt.Errorf("price in unknown region %s", r))
		}
	}
	return errs
}

// validateAll validates each type and requires names strictly ascending,
// which is the generator's order and rules out duplicates.
func validateAll(types []InstanceType) error {
	var errs []error
	for i, t := range types {
		if err := t.Validate(); err != nil {
			errs = append(errs, err)
		}
		if i > 0 && t.Name <= types[i-1].Name {
			errs = append(errs, fmt.Errorf("instance type %q: after %q, want names unique and sorted", t.Name, types[i-1].Name))
		}
	}
	return errors.Join(errs...)
}

// ParseName splits "<family>.<size>" and the family into its category
// letters and generation number, the way the AWS provider derives its
// labels: "p4de.24xlarge" is family p4de, size 24xlarge, category p,
// generation 4.
func ParseName(name string) (family, size, category string, generation int, err error) {
	family, size, ok := strings.Cut(name, ".")
	if !ok || family == "" || size == "" || strings.Contains(size, ".") {
		return "", "", "", 0, fmt.Errorf("name %q, want <family>.<size>", name)
	}
	letters := strings.IndexFunc(family, func(r rune) bool { return r < 'a' || r > 'z' })
	if letters <= 0 {
		return "", "", "", 0, fmt.Errorf("family %q, want lowercase letters then a generation number", family)
	}
	digits := strings.IndexFunc(family[letters:], func(r rune) bool { return r < '0' || r > '9' })
	if digits < 0 {
		digits = len(family) - letters
	}
	if digits == 0 {
		return "", "", "", 0, fmt.Errorf("family %q, want lowercase letters then a generation number", family)
	}
	generation, err = strconv.Atoi(family[letters : letters+digits])
	if err != nil {
		return "", "", "", 0, fmt.Errorf("family %q generation, %w", family, err)
	}
	return family, size, family[:letters], generation, nil
}
