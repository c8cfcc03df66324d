package main

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

// sources are where each partition's bulk offer files are published
// (docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/using-the-aws-price-list-bulk-api.html):
// the host, and the region index's path on it.
var sources = map[string]struct{ host, index string }{
	"aws":        {"https://pricing.us-east-1.amazonaws.com", "/offers/v1.0/aws/AmazonEC2/current/region_index.json"},
	"aws-us-gov": {"https://pricing.us-east-1.amazonaws.com", "/offers/v1.0/aws/AmazonEC2/current/region_index.json"},
	"aws-cn":     {"https://pricing.cn-north-1.amazonaws.com.cn", "/offers/v1.0/cn/AmazonEC2/current/region_index.json"},
}

func main() {
	partition := flag.String("partition", "aws", "partition: aws, aws-us-gov or aws-cn")
	source := flag.String("source", "", "the offer files' host URL, or a directory laid out as the host (default: the partition's Price List host)")
	reference := flag.String("reference", "", "read the prices from this Go file of the reference (karpenter-provider-aws pkg/providers/pricing/zz_generated.pricing_*.go) instead of the offer files")
	out := flag.String("out", "", "file to write (default pkg/cloudprovider/aws/prices/<partition>.txt)")
	flag.Parse()
	if err := run(*partition, *source, *reference, *out, time.Now().UTC()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(partition, source, reference, out string, now time.Time) error {
	src, ok := sources[partition]
	if !ok {
		return fmt.Errorf("unknown partition %q: aws, aws-us-gov or aws-cn", partition)
	}
	if out == "" {
		out = "pkg/cloudprovider/aws/prices/" + partition + ".txt"
	}
	var table table
	var err error
	if reference != "" {
		table, err = fromReference(reference, partition)
	} else {
		table, err = fromOffers(newFetcher(cmpOr(source, src.host)), src.index, partition, now)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(out, table.render(), 0o644)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// table is what the tool writes: where the prices come from, and the
// prices per region and type.
type table struct {
	header []string
	prices map[string]map[string]float64
}

// render is the table in the embedded format (aws.ParsePriceTable):
// regions and types sorted, so regenerating shows a diff of prices only.
func (t table) render() []byte {
	var b bytes.Buffer
	for _, h := range t.header {
		b.WriteString("# " + h + "\n")
	}
	for _, region := range slices.Sorted(maps.Keys(t.prices)) {
		fmt.Fprintf(&b, "region %s %s\n", region, aws.Currency(region))
		for _, name := range slices.Sorted(maps.Keys(t.prices[region])) {
			b.WriteString(name + " " + strconv.FormatFloat(t.prices[region][name], 'f', -1, 64) + "\n")
		}
	}
	return b.Bytes()
}
