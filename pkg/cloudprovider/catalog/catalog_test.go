package catalog

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// load is Load for tests: the checked-in catalog, or a fatal error.
func load(t *testing.T) []InstanceType {
	t.Helper()
	types, err := Load()
	if err != nil {
		t.Fatalf("Load() = %v", err)
	}
	return types
}

// byFamily groups types by family, keeping the catalog's order.
func byFamily(types []InstanceType) map[string][]InstanceType {
	families := map[string][]InstanceType{}
	for _, it := range types {
		families[it.Family] = append(families[it.Family], it)
	}
	return families
}

func TestLoadHasEnoughUniqueTypes(t *testing.T) {
	types := load(t)
	if len(types) < 120 {
		t.Errorf("Load() returned %d types, want >= 120", len(types))
	}
	seen := map[string]bool{}
	for _, it := range types {
		if seen[it.Name] {
			t.Errorf("%s listed twice", it.Name)
		}
		seen[it.Name] = true
	}
	if !slices.IsSortedFunc(types, func(a, b InstanceType) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("Load() is not sorted by name")
	}
}

func TestLoadReturnsFreshValues(t *testing.T) {
	first := load(t)
	want, _ := first[0].OnDemandPrice("us-east-1")
	first[0].Name = "changed"
	first[0].Prices["us-east-1"] = -1
	second := load(t)
	if second[0].Name == "changed" {
		t.Error("a change to one Load result shows in the next")
	}
	if got, _ := second[0].OnDemandPrice("us-east-1"); got != want {
		t.Errorf("price after changing an earlier result = %v, want %v", got, want)
	}
}

func TestRequiredFamiliesArePresent(t *testing.T) {
	families := byFamily(load(t))
	for _, tc := range []struct {
		family   string
		minSizes int
	}{
		{"m4", 3}, {"m5", 3}, {"m6i", 3}, {"m7g", 3},
		{"c4", 3}, {"c5", 3}, {"c6i", 3}, {"c7g", 3},
		{"r5", 3}, {"r6i", 3}, {"t3", 3}, {"t4g", 3},
		{"g4dn", 3}, {"g5", 3}, {"g5g", 3}, {"g6", 3}, {"g6e", 3},
		{"p4d", 1}, {"p5", 1},
	} {
		if got := len(families[tc.family]); got < tc.minSizes {
			t.Errorf("family %s has %d sizes, want >= %d", tc.family, got, tc.minSizes)
		}
	}
	if !slices.ContainsFunc(families["c4"], func(it InstanceType) bool { return it.Name == "c4.xlarge" }) {
		t.Error("c4.xlarge missing")
	}
}

// dominates reports whether a has at least b's vCPUs, memory and GPUs.
func dominates(a, b InstanceType) bool {
	return a.VCPU >= b.VCPU && a.MemoryMiB >= b.MemoryMiB && a.GPUCount >= b.GPUCount
}

// Price rises with size: within a family, a type with at least another's
// resources costs at least as much, and more when it has more of one.
// GPU sizes are only partly ordered (g5.16xlarge has more CPU but fewer
// GPUs than g5.12xlarge), which is why this compares resources, not names.
func TestPriceRisesWithResourcesWithinAFamily(t *testing.T) {
	for family, types := range byFamily(load(t)) {
		for _, a := range types {
			for _, b := range types {
				if a.Name == b.Name || !dominates(a, b) {
					continue
				}
				same := dominates(b, a)
				for _, r := range Regions() {
					pa, pb := a.Prices[r], b.Prices[r]
					if same && pa != pb {
						t.Errorf("%s: %s and %s have the same resources but cost %v and %v in %s", family, a.Name, b.Name, pa, pb, r)
					}
					if !same && pa <= pb {
						t.Errorf("%s: %s is larger than %s but costs %v <= %v in %s", family, a.Name, b.Name, pa, pb, r)
					}
				}
			}
		}
	}
}

func TestMemoryPerVCPUIsConstantWithinAFamily(t *testing.T) {
	for family, types := range byFamily(load(t)) {
		first := types[0]
		for _, it := range types[1:] {
			// Cross-multiplied so no ratio is rounded.
			if it.MemoryMiB*int64(first.VCPU) != first.MemoryMiB*int64(it.VCPU) {
				t.Errorf("%s: %s has %d MiB for %d vCPUs, %s %d MiB for %d", family,
					it.Name, it.MemoryMiB, it.VCPU, first.Name, first.MemoryMiB, first.VCPU)
			}
		}
	}
}

func TestGPUFieldsExactlyForGPUFamilies(t *testing.T) {
	gpuNames := []string{"a100", "a10g", "h100", "l4", "l40s", "t4", "t4g"}
	for _, it := range load(t) {
		wantGPU := it.Category == "g" || it.Category == "p"
		hasAny := it.GPUCount != 0 || it.GPUName != "" || it.GPUManufacturer != "" || it.GPUMemoryMiB != 0
		hasAll := it.GPUCount > 0 && it.GPUName != "" && it.GPUManufacturer == "nvidia" && it.GPUMemoryMiB > 0
		switch {
		case wantGPU && !hasAll:
			t.Errorf("%s: GPU fields %d %q %q %d, want all set", it.Name, it.GPUCount, it.GPUName, it.GPUManufacturer, it.GPUMemoryMiB)
		case !wantGPU && hasAny:
			t.Errorf("%s: GPU fields %d %q %q %d, want none", it.Name, it.GPUCount, it.GPUName, it.GPUManufacturer, it.GPUMemoryMiB)
		case wantGPU && !slices.Contains(gpuNames, it.GPUName):
			t.Errorf("%s: GPU name %q, want one of %v", it.Name, it.GPUName, gpuNames)
		}
	}
}

func TestARM64ExactlyForGravitonFamilies(t *testing.T) {
	graviton := []string{"c7g", "g5g", "m7g", "t4g"}
	for _, it := range load(t) {
		want := ArchAMD64
		if slices.Contains(graviton, it.Family) {
			want = ArchARM64
		}
		if it.Architecture != want {
			t.Errorf("%s: architecture %s, want %s", it.Name, it.Architecture, want)
		}
	}
}

func TestEveryTypeIsPricedInEveryRegion(t *testing.T) {
	regions := Regions()
	for _, r := range []string{"us-east-1", "us-west-2", "eu-west-1"} {
		if !slices.Contains(regions, r) {
			t.Errorf("Regions() = %v, want %s among them", regions, r)
		}
	}
	for _, it := range load(t) {
		for _, r := range regions {
			if p, ok := it.OnDemandPrice(r); !ok || p <= 0 {
				t.Errorf("%s: OnDemandPrice(%s) = %v, %v, want a positive price", it.Name, r, p, ok)
			}
		}
		if p, ok := it.OnDemandPrice("mars-north-1"); ok {
			t.Errorf("%s: OnDemandPrice(mars-north-1) = %v, true, want false", it.Name, p)
		}
	}
}

func TestSpotDiscountIsPerFamily(t *testing.T) {
	for family, types := range byFamily(load(t)) {
		for _, it := range types {
			if it.SpotDiscount != types[0].SpotDiscount {
				t.Errorf("%s: %s spot discount %v, %s %v", family, it.Name, it.SpotDiscount, types[0].Name, types[0].SpotDiscount)
			}
			od, _ := it.OnDemandPrice("us-east-1")
			spot, ok := it.SpotPrice("us-east-1")
			if !ok || spot <= 0 || spot >= od {
				t.Errorf("%s: SpotPrice(us-east-1) = %v, %v, want between 0 and the on-demand %v", it.Name, spot, ok, od)
			}
		}
	}
	if _, ok := (InstanceType{}).SpotPrice("us-east-1"); ok {
		t.Error("SpotPrice of an unpriced type = true, want false")
	}
}

func TestLabels(t *testing.T) {
	types := load(t)
	get := func(name string) InstanceType {
		i := slices.IndexFunc(types, func(it InstanceType) bool { return it.Name == name })
		if i < 0 {
			t.Fatalf("%s missing", name)
		}
		return types[i]
	}
	for _, tc := range []struct {
		name string
		want map[string]string
	}{
		{"c4.xlarge", map[string]string{
			v1.LabelInstanceType: "c4.xlarge", v1.LabelArch: "amd64", v1.LabelOS: "linux",
			v1.LabelInstanceCategory: "c", v1.LabelInstanceFamily: "c4", v1.LabelInstanceGeneration: "4",
			v1.LabelInstanceSize: "xlarge", v1.LabelInstanceCPU: "4", v1.LabelInstanceMemory: "7680",
		}},
		{"g5g.16xlarge", map[string]string{
			v1.LabelInstanceType: "g5g.16xlarge", v1.LabelArch: "arm64", v1.LabelOS: "linux",
			v1.LabelInstanceCategory: "g", v1.LabelInstanceFamily: "g5g", v1.LabelInstanceGeneration: "5",
			v1.LabelInstanceSize: "16xlarge", v1.LabelInstanceCPU: "64", v1.LabelInstanceMemory: "131072",
			v1.LabelInstanceGPUName: "t4g", v1.LabelInstanceGPUCount: "2",
			v1.LabelInstanceGPUManufacturer: "nvidia", v1.LabelInstanceGPUMemory: "16384",
		}},
	} {
		if diff := cmp.Diff(tc.want, get(tc.name).Labels()); diff != "" {
			t.Errorf("%s Labels() (-want +got):\n%s", tc.name, diff)
		}
	}
}

// Every label of every type agrees with the numbers it stands for.
func TestLabelsMatchTheFields(t *testing.T) {
	for _, it := range load(t) {
		want := map[string]string{
			v1.LabelInstanceType:       it.Name,
			v1.LabelArch:               it.Architecture,
			v1.LabelOS:                 "linux",
			v1.LabelInstanceCategory:   it.Category,
			v1.LabelInstanceFamily:     it.Family,
			v1.LabelInstanceGeneration: strconv.Itoa(it.Generation),
			v1.LabelInstanceSize:       it.Size,
			v1.LabelInstanceCPU:        strconv.Itoa(it.VCPU),
			v1.LabelInstanceMemory:     strconv.FormatInt(it.MemoryMiB, 10),
		}
		if it.GPUCount > 0 {
			want[v1.LabelInstanceGPUName] = it.GPUName
			want[v1.LabelInstanceGPUCount] = strconv.Itoa(it.GPUCount)
			want[v1.LabelInstanceGPUManufacturer] = it.GPUManufacturer
			want[v1.LabelInstanceGPUMemory] = strconv.FormatInt(it.GPUMemoryMiB, 10)
		}
		if diff := cmp.Diff(want, it.Labels()); diff != "" {
			t.Errorf("%s Labels() (-want +got):\n%s", it.Name, diff)
		}
	}
}

// valid is a correct type for the rejection table to break one field of.
func valid() InstanceType {
	prices := map[string]float64{}
	for _, r := range Regions() {
		prices[r] = 0.199
	}
	return InstanceType{
		Name: "c4.xlarge", Family: "c4", Category: "c", Generation: 4, Size: "xlarge", Architecture: ArchAMD64,
		VCPU: 4, MemoryMiB: 7680, MaxPods: 58, Prices: prices, SpotDiscount: 0.65,
	}
}

func TestValidate(t *testing.T) {
	gpu := func(it *InstanceType) {
		it.GPUName, it.GPUManufacturer, it.GPUCount, it.GPUMemoryMiB = "t4", "nvidia", 1, 16384
	}
	for _, tc := range []struct {
		name   string
		change func(*InstanceType)
		want   string // "" for valid
	}{
		{"valid", func(*InstanceType) {}, ""},
		{"valid with GPUs", gpu, ""},
		{"name without size", func(it *InstanceType) { it.Name = "c4" }, "want <family>.<size>"},
		{"name with two dots", func(it *InstanceType) { it.Name = "c4.x.large" }, "want <family>.<size>"},
		{"family without generation", func(it *InstanceType) { it.Name = "c.xlarge" }, "generation number"},
		{"family starting with a digit", func(it *InstanceType) { it.Name = "4c.xlarge" }, "generation number"},
		{"family mismatch", func(it *InstanceType) { it.Family = "c5" }, `family "c5", want "c4"`},
		{"size mismatch", func(it *InstanceType) { it.Size = "large" }, `size "large", want "xlarge"`},
		{"category mismatch", func(it *InstanceType) { it.Category = "m" }, `category "m", want "c"`},
		{"generation mismatch", func(it *InstanceType) { it.Generation = 5 }, "generation 5, want 4"},
		{"architecture", func(it *InstanceType) { it.Architecture = "x86_64" }, `architecture "x86_64"`},
		{"vcpu", func(it *InstanceType) { it.VCPU = 0 }, "vcpu 0"},
		{"memory", func(it *InstanceType) { it.MemoryMiB = -1 }, "memoryMiB -1"},
		{"max pods", func(it *InstanceType) { it.MaxPods = 0 }, "maxPods 0"},
		{"negative GPUs", func(it *InstanceType) { it.GPUCount = -1 }, "gpuCount -1"},
		{"GPU name without GPUs", func(it *InstanceType) { it.GPUName = "t4" }, "without GPUs"},
		{"GPUs without name", func(it *InstanceType) { gpu(it); it.GPUName = "" }, "gpuName empty"},
		{"GPUs without manufacturer", func(it *InstanceType) { gpu(it); it.GPUManufacturer = "" }, "gpuManufacturer empty"},
		{"GPUs without memory", func(it *InstanceType) { gpu(it); it.GPUMemoryMiB = 0 }, "gpuMemoryMiB 0 with 1 GPUs"},
		{"missing region", func(it *InstanceType) { delete(it.Prices, "eu-west-1") }, "no price in region eu-west-1"},
		{"zero price", func(it *InstanceType) { it.Prices["us-west-2"] = 0 }, "price 0 in region us-west-2"},
		{"unknown region", func(it *InstanceType) { it.Prices["mars-north-1"] = 1 }, "unknown region mars-north-1"},
		{"spot discount", func(it *InstanceType) { it.SpotDiscount = 1 }, "spotDiscount 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it := valid()
			tc.change(&it)
			err := it.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			case tc.want != "" && !strings.HasPrefix(err.Error(), `instance type "`+it.Name+`": `):
				t.Errorf("Validate() = %v, want it to name the type", err)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	encode := func(types ...InstanceType) string {
		raw, err := json.Marshal(types)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	other := valid()
	other.Name, other.Size, other.VCPU, other.MemoryMiB = "c4.large", "large", 2, 3840
	broken := valid()
	broken.VCPU = 0
	for _, tc := range []struct {
		name string
		raw  string
		want string // "" for valid
	}{
		{"sorted", encode(other, valid()), ""},
		{"not JSON", "{", "decoding instancetypes.json"},
		{"unknown field", `[{"name":"c4.xlarge","cores":4}]`, `unknown field "cores"`},
		{"invalid type", encode(broken), `instance type "c4.xlarge": vcpu 0`},
		{"duplicate", encode(valid(), valid()), `instance type "c4.xlarge": after "c4.xlarge"`},
		{"unsorted", encode(valid(), other), `instance type "c4.large": after "c4.xlarge"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode([]byte(tc.raw))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("decode() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("decode() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
