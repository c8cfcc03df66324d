package aws

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Expected prices are AWS's, as the reference's generated tables have
// them (v1.14.1 pkg/providers/pricing/zz_generated.pricing_*.go).
func TestStaticPrices(t *testing.T) {
	cases := []struct {
		region, instanceType string
		want                 float64
	}{
		{"us-east-1", "m5.large", 0.096},
		{"us-east-1", "m5.metal", 4.608},
		{"us-east-1", "p5.48xlarge", 55.04},
		// A region the table does not list: its partition's fallback.
		{"us-west-2", "m5.large", 0.096},
		{"us-gov-east-1", "c5.large", 0.102},
		{"us-gov-west-1", "c5.large", 0.102},
		// China's prices are CNY, and a China region the table does not
		// list falls back to cn-north-1's, not to us-east-1's USD.
		{"cn-north-1", "c4.large", 1.134},
		{"cn-northwest-1", "c4.large", 1.134},
	}
	for _, tc := range cases {
		prices, err := staticPrices(tc.region)
		if err != nil {
			t.Fatal(err)
		}
		if got := prices[tc.instanceType]; got != tc.want {
			t.Errorf("%s %s: %g, want %g", tc.region, tc.instanceType, got, tc.want)
		}
	}
}

func TestParsePriceTable(t *testing.T) {
	got, err := ParsePriceTable([]byte("# comment\nregion us-east-1 USD\nm5.large 0.096\nregion eu-west-1 USD\nm5.large 0.107\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := PriceTable{Regions: []string{"us-east-1", "eu-west-1"}, Prices: map[string]map[string]float64{"us-east-1": {"m5.large": 0.096}, "eu-west-1": {"m5.large": 0.107}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	for _, bad := range []string{"m5.large 0.096\n", "region us-east-1 USD\nm5.large free\n", "region a USD\nregion a USD\n", "region us-east-1 USD\nm5.large 0\n"} {
		if _, err := ParsePriceTable([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// The cost of the table's one parse, on first use.
func BenchmarkParsePriceTable(b *testing.B) {
	raw, err := priceFiles.ReadFile("prices/aws.txt")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParsePriceTable(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// Each region's partition (AWS's ARN partitions), and no table for a
// partition without an embedded file: an error, not a panic.
func TestPriceTablePartitions(t *testing.T) {
	for region, want := range map[string]string{"us-east-1": "aws", "eu-west-1": "aws", "cn-north-1": "aws-cn", "us-gov-west-1": "aws-us-gov"} {
		if got := Partition(region); got != want {
			t.Errorf("Partition(%s) = %s, want %s", region, got, want)
		}
		if _, err := priceTable(want); err != nil {
			t.Errorf("%s: %v", want, err)
		}
	}
	if _, err := priceTable("aws-iso"); err == nil {
		t.Error("aws-iso has a price table")
	}
}
