package aws

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// The embedded on-demand price tables, one file per partition, written
// by hack/prices (docs/aws.md, "Prices"): lines "region NAME CURRENCY"
// open a region, lines "TYPE PRICE" price a type in it, lines starting
// with "#" say where the prices come from and when.
//
//go:embed prices/*.txt
var priceFiles embed.FS

// Partition is the AWS partition region is in.
func Partition(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	}
	return "aws"
}

// PriceTable is a partition's on-demand prices: per region, per
// instance type, per hour in the region's currency; Regions in the
// file's order.
type PriceTable struct {
	Regions []string
	Prices  map[string]map[string]float64
}

// The embedded tables, each parsed on its first use only: a provider in
// one region reads one partition's file, once.
var (
	awsPriceTable      = sync.OnceValues(func() (PriceTable, error) { return readPriceTable("aws") })
	awsChinaPriceTable = sync.OnceValues(func() (PriceTable, error) { return readPriceTable("aws-cn") })
	awsGovPriceTable   = sync.OnceValues(func() (PriceTable, error) { return readPriceTable("aws-us-gov") })
)

// priceTable is partition's embedded table.
func priceTable(partition string) (PriceTable, error) {
	switch partition {
	case "aws":
		return awsPriceTable()
	case "aws-cn":
		return awsChinaPriceTable()
	case "aws-us-gov":
		return awsGovPriceTable()
	}
	return PriceTable{}, fmt.Errorf("no price table for partition %q", partition)
}

// readPriceTable parses partition's embedded file.
func readPriceTable(partition string) (PriceTable, error) {
	raw, err := priceFiles.ReadFile("prices/" + partition + ".txt")
	if err != nil {
		return PriceTable{}, fmt.Errorf("reading the %s price table, %w", partition, err)
	}
	t, err := ParsePriceTable(raw)
	if err != nil {
		return PriceTable{}, fmt.Errorf("parsing the %s price table, %w", partition, err)
	}
	return t, nil
}

// fallbackRegions are, per partition, the region whose prices stand in
// for a region the table does not list.
var fallbackRegions = map[string]string{"aws": "us-east-1", "aws-cn": "cn-north-1", "aws-us-gov": "us-gov-west-1"}

// staticPrices are region's prices in the embedded table: its own, or,
// for a region the table does not list, its partition's fallback
// region's, so the solver still ranks types by a real price ratio, in
// the partition's currency (the reference falls back to us-east-1's
// whatever the partition: USD prices for China).
func staticPrices(region string) (map[string]float64, error) {
	table, err := priceTable(Partition(region))
	if err != nil {
		return nil, err
	}
	if prices, ok := table.Prices[region]; ok {
		return prices, nil
	}
	prices, ok := table.Prices[fallbackRegions[Partition(region)]]
	if !ok {
		return nil, fmt.Errorf("the %s price table has no %s", Partition(region), fallbackRegions[Partition(region)])
	}
	return prices, nil
}

// ParsePriceTable reads a table in the embedded format.
func ParsePriceTable(raw []byte) (PriceTable, error) {
	t := PriceTable{Prices: map[string]map[string]float64{}}
	var region string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		switch {
		case len(fields) == 3 && fields[0] == "region":
			region = fields[1]
			if _, dup := t.Prices[region]; dup {
				return PriceTable{}, fmt.Errorf("line %d: region %s listed twice", n, region)
			}
			t.Regions = append(t.Regions, region)
			t.Prices[region] = map[string]float64{}
		case len(fields) == 2 && region != "":
			price, err := strconv.ParseFloat(fields[1], 64)
			if err != nil || price <= 0 {
				return PriceTable{}, fmt.Errorf("line %d: price %q of %s is not a positive number", n, fields[1], fields[0])
			}
			t.Prices[region][fields[0]] = price
		default:
			return PriceTable{}, fmt.Errorf("line %d: %q is neither a region nor a price", n, line)
		}
	}
	return t, sc.Err()
}
