package ec2endpoint_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// instanceTypes pages through DescribeInstanceTypes with the SDK's
// paginator.
func instanceTypes(t *testing.T, f *fixture, in *ec2.DescribeInstanceTypesInput) (types []ec2types.InstanceTypeInfo, pages int) {
	t.Helper()
	pager := ec2.NewDescribeInstanceTypesPaginator(f.client, in)
	for pager.HasMorePages() {
		out, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, out.InstanceTypes...)
		pages++
	}
	return types, pages
}

func TestDescribeInstanceTypesIsTheCatalog(t *testing.T) {
	f := newFixture(t, profile())
	cat, err := ec2endpoint.ServedCatalog()
	if err != nil {
		t.Fatal(err)
	}
	got, pages := instanceTypes(t, f, &ec2.DescribeInstanceTypesInput{})
	if len(got) != len(cat) || pages != (len(cat)+99)/100 {
		t.Fatalf("%d types in %d pages, want the catalog's %d in pages of 100", len(got), pages, len(cat))
	}
	byName := map[string]catalog.InstanceType{}
	for _, c := range cat {
		byName[c.Name] = c
	}
	for _, it := range got {
		c := byName[string(it.InstanceType)]
		if int(*it.VCpuInfo.DefaultVCpus) != c.VCPU || *it.MemoryInfo.SizeInMiB != c.MemoryMiB {
			t.Errorf("%s: %d vCPU, %d MiB; want %d, %d", c.Name, *it.VCpuInfo.DefaultVCpus, *it.MemoryInfo.SizeInMiB, c.VCPU, c.MemoryMiB)
		}
		if c.GPUCount > 0 && (it.GpuInfo == nil || int(*it.GpuInfo.Gpus[0].Count) != c.GPUCount) {
			t.Errorf("%s: GPU info %v, catalog has %d GPUs", c.Name, it.GpuInfo, c.GPUCount)
		}
		// Every card's interfaces add up to the type's.
		ni, enis := it.NetworkInfo, int32(0)
		for _, card := range ni.NetworkCards {
			enis += *card.MaximumNetworkInterfaces
		}
		if enis != *ni.MaximumNetworkInterfaces || int(*ni.MaximumNetworkCards) != len(ni.NetworkCards) {
			t.Errorf("%s: cards %d with %d interfaces, type %d", c.Name, *ni.MaximumNetworkCards, enis, *ni.MaximumNetworkInterfaces)
		}
	}
}

func TestDescribeInstanceTypeDetails(t *testing.T) {
	f := newFixture(t, profile())
	got, _ := instanceTypes(t, f, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"g5.xlarge", "m7g.large", "c4.large", "m5.metal", "t3.large"}})
	type summary struct {
		Name, Arch, Manufacturer, Hypervisor string
		BareMetal, Burstable, Current        bool
		GPUs                                 string
		Storage                              bool
		Usage                                []ec2types.UsageClassType
	}
	var sums []summary
	for _, it := range got {
		s := summary{
			Name: string(it.InstanceType), Arch: string(it.ProcessorInfo.SupportedArchitectures[0]), Manufacturer: *it.ProcessorInfo.Manufacturer,
			Hypervisor: string(it.Hypervisor), BareMetal: *it.BareMetal, Burstable: *it.BurstablePerformanceSupported,
			Current: *it.CurrentGeneration, Storage: *it.InstanceStorageSupported, Usage: it.SupportedUsageClasses,
		}
		if it.GpuInfo != nil {
			g := it.GpuInfo.Gpus[0]
			s.GPUs = strconv.Itoa(int(*g.Count)) + "x " + *g.Manufacturer + " " + *g.Name + " " + strconv.Itoa(int(*g.MemoryInfo.SizeInMiB)) + "MiB"
		}
		sums = append(sums, s)
	}
	usage := []ec2types.UsageClassType{ec2types.UsageClassTypeOnDemand, ec2types.UsageClassTypeSpot}
	want := []summary{
		{Name: "c4.large", Arch: "x86_64", Manufacturer: "Intel", Hypervisor: "xen", Usage: usage},
		{Name: "g5.xlarge", Arch: "x86_64", Manufacturer: "AMD", Hypervisor: "nitro", Current: true, GPUs: "1x NVIDIA A10G 22888MiB", Storage: true, Usage: usage},
		{Name: "m5.metal", Arch: "x86_64", Manufacturer: "Intel", BareMetal: true, Current: true, Usage: usage},
		{Name: "m7g.large", Arch: "arm64", Manufacturer: "AWS", Hypervisor: "nitro", Current: true, Usage: usage},
		{Name: "t3.large", Arch: "x86_64", Manufacturer: "Intel", Hypervisor: "nitro", Burstable: true, Current: true, Usage: usage},
	}
	if diff := cmp.Diff(want, sums); diff != "" {
		t.Errorf("instance types (-want +got):\n%s", diff)
	}
}

func TestDescribeInstanceTypesFilters(t *testing.T) {
	f := newFixture(t, profile())
	for _, tc := range []struct {
		name    string
		filters []ec2types.Filter
		want    func(catalog.InstanceType) bool
	}{
		{"arm64", []ec2types.Filter{filter("processor-info.supported-architecture", "arm64"), filter("supported-virtualization-type", "hvm")},
			func(c catalog.InstanceType) bool { return c.Architecture == catalog.ArchARM64 }},
		{"wildcard", []ec2types.Filter{filter("instance-type", "c5.*", "m5.?xlarge")},
			func(c catalog.InstanceType) bool {
				return c.Family == "c5" || c.Family == "m5" && len(c.Size) == len("2xlarge") && c.Size[1:] == "xlarge"
			}},
		{"burstable", []ec2types.Filter{filter("burstable-performance-supported", "true")},
			// T1 predates CPU credits.
			func(c catalog.InstanceType) bool { return c.Category == "t" && c.Generation >= 2 }},
		{"hvm", []ec2types.Filter{filter("supported-virtualization-type", "hvm")},
			func(c catalog.InstanceType) bool { return c.Name != "t1.micro" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, _ := ec2endpoint.ServedCatalog()
			var want []string
			for _, c := range cat {
				if tc.want(c) {
					want = append(want, c.Name)
				}
			}
			got, _ := instanceTypes(t, f, &ec2.DescribeInstanceTypesInput{Filters: tc.filters})
			var names []string
			for _, it := range got {
				names = append(names, string(it.InstanceType))
			}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("types (-want +got):\n%s", diff)
			}
		})
	}
	_, err := f.client.DescribeInstanceTypes(context.Background(), &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"m5.large", "x9.huge"}})
	if code := apiCode(t, err); code != "InvalidInstanceType" {
		t.Errorf("unknown type: %q", code)
	}
}

func TestDescribeInstanceTypeOfferings(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	for _, tc := range []struct {
		location ec2types.LocationType
		want     []string
	}{
		{ec2types.LocationTypeAvailabilityZone, []string{"us-west-2a", "us-west-2b"}},
		{ec2types.LocationTypeAvailabilityZoneId, []string{"usw2-az1", "usw2-az2"}},
		{ec2types.LocationTypeRegion, []string{"us-west-2"}},
	} {
		var got []string
		pager := ec2.NewDescribeInstanceTypeOfferingsPaginator(f.client, &ec2.DescribeInstanceTypeOfferingsInput{
			LocationType: tc.location, Filters: []ec2types.Filter{filter("instance-type", "m5.large")}, MaxResults: aws.Int32(5),
		})
		for pager.HasMorePages() {
			out, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range out.InstanceTypeOfferings {
				if o.LocationType != tc.location || o.InstanceType != "m5.large" {
					t.Errorf("offering %+v", o)
				}
				got = append(got, *o.Location)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s locations (-want +got):\n%s", tc.location, diff)
		}
	}
	cat, _ := ec2endpoint.ServedCatalog()
	all := 0
	pager := ec2.NewDescribeInstanceTypeOfferingsPaginator(f.client, &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone, MaxResults: aws.Int32(50)})
	for pager.HasMorePages() {
		out, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all += len(out.InstanceTypeOfferings)
	}
	if all != 2*len(cat) {
		t.Errorf("%d zonal offerings, want every type in both zones (%d)", all, 2*len(cat))
	}
}

func TestDescribeAvailabilityZones(t *testing.T) {
	f := newFixture(t, profile(func(s *simv1alpha1.CloudProfileSpec) {
		s.ZoneIDs = map[string]string{"us-west-2b": "usw2-az4"}
	}))
	for _, tc := range []struct {
		in   *ec2.DescribeAvailabilityZonesInput
		want [][2]string
	}{
		{&ec2.DescribeAvailabilityZonesInput{}, [][2]string{{"us-west-2a", "usw2-az1"}, {"us-west-2b", "usw2-az4"}}},
		{&ec2.DescribeAvailabilityZonesInput{ZoneIds: []string{"usw2-az4"}}, [][2]string{{"us-west-2b", "usw2-az4"}}},
		{&ec2.DescribeAvailabilityZonesInput{Filters: []ec2types.Filter{filter("zone-name", "*a")}}, [][2]string{{"us-west-2a", "usw2-az1"}}},
	} {
		out, err := f.client.DescribeAvailabilityZones(context.Background(), tc.in)
		if err != nil {
			t.Fatal(err)
		}
		var got [][2]string
		for _, z := range out.AvailabilityZones {
			if *z.RegionName != "us-west-2" || z.State != ec2types.AvailabilityZoneStateAvailable {
				t.Errorf("zone %+v", z)
			}
			got = append(got, [2]string{*z.ZoneName, *z.ZoneId})
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("zones (-want +got):\n%s", diff)
		}
	}
}

func TestDescribeSpotPriceHistoryIsTheSimsPrices(t *testing.T) {
	f := newFixture(t, profile(func(s *simv1alpha1.CloudProfileSpec) {
		s.SpotPrices = []simv1alpha1.SpotPrice{{InstanceType: "c5.large", Zone: "us-west-2b", Price: "0.0123"}}
	}))
	ctx := context.Background()
	prices, err := f.server.Cloud().Prices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, p := range prices {
		want[p.InstanceType+"/"+p.Zone] = strconv.FormatFloat(p.Spot, 'f', 6, 64)
	}
	got := map[string]string{}
	pager := ec2.NewDescribeSpotPriceHistoryPaginator(f.client, &ec2.DescribeSpotPriceHistoryInput{
		ProductDescriptions: []string{"Linux/UNIX"}, StartTime: aws.Time(f.clock.Now()),
	})
	for pager.HasMorePages() {
		out, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range out.SpotPriceHistory {
			if !sp.Timestamp.Equal(f.clock.Now()) || sp.ProductDescription != "Linux/UNIX" {
				t.Errorf("price %+v", sp)
			}
			got[string(sp.InstanceType)+"/"+*sp.AvailabilityZone] = *sp.SpotPrice
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spot prices (-want +got):\n%s", diff)
	}
	if got["c5.large/us-west-2b"] != "0.012300" {
		t.Errorf("the profile's price: %s", got["c5.large/us-west-2b"])
	}
	out, err := f.client.DescribeSpotPriceHistory(ctx, &ec2.DescribeSpotPriceHistoryInput{
		InstanceTypes: []ec2types.InstanceType{"c5.large"}, AvailabilityZone: aws.String("us-west-2b"),
		ProductDescriptions: []string{"Linux/UNIX", "Windows"},
	})
	if err != nil || len(out.SpotPriceHistory) != 1 || *out.SpotPriceHistory[0].AvailabilityZoneId != "usw2-az2" {
		t.Errorf("one pool: %+v, %v", out, err)
	}
	if slices.ContainsFunc(out.SpotPriceHistory, func(sp ec2types.SpotPrice) bool { return sp.ProductDescription == "Windows" }) {
		t.Errorf("the simulated cloud has no Windows prices")
	}
}
