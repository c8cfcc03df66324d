package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

var now = time.Date(2026, 7, 2, 0, 0, 0, 0, time.UTC)

// The fixture is a region index and two regions' price list files in the
// published bulk format, each m5.large listed also with a dedicated
// tenancy, Windows, SQL Server, an unused reservation and a capacity
// block, each dearer or cheaper: only the filters leave the Linux
// on-demand price.
func TestFromOffers(t *testing.T) {
	for partition, want := range map[string]map[string]map[string]float64{
		"aws":        {"us-east-1": {"m5.large": 0.096, "m5.metal": 4.608}},
		"aws-us-gov": {"us-gov-west-1": {"m5.large": 0.12, "m5.metal": 4.608}},
	} {
		got, err := fromOffers(newFetcher("testdata/offers"), sources[partition].index, partition, now)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got.prices); diff != "" {
			t.Errorf("%s prices (-want +got):\n%s", partition, diff)
		}
		if !strings.Contains(strings.Join(got.header, " "), "region index published 2026-07-01T00:00:00Z") {
			t.Errorf("header %q does not date the offer files", got.header)
		}
	}
}

func TestFromOffersRefusesATruncatedFile(t *testing.T) {
	if _, err := offerPrices(strings.NewReader(`{"products":{"AAA":{"sku":"AAA"`), "us-east-1"); err == nil {
		t.Error("a truncated file parsed")
	}
	if _, err := offerPrices(strings.NewReader(`{"terms":{},"products":{}}`), "us-east-1"); err == nil {
		t.Error("terms before products parsed")
	}
}

func TestFromReference(t *testing.T) {
	got, err := fromReference("testdata/reference.go.txt", "aws")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]map[string]float64{"us-east-1": {"m5.large": 0.096, "m5.metal": 4.608}}, got.prices); diff != "" {
		t.Error(diff)
	}
	if !strings.Contains(strings.Join(got.header, " "), "generated at 2026-07-06T14:20:29Z") {
		t.Errorf("header %q does not date the reference's table", got.header)
	}
	if _, err := fromReference("testdata/reference.go.txt", "aws-cn"); err == nil {
		t.Error("us-east-1 accepted as a China region")
	}
}

// What the tool writes, the provider reads back.
func TestRenderParses(t *testing.T) {
	out := filepath.Join(t.TempDir(), "aws.txt")
	if err := run("aws", "testdata/offers", "", out, now); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	table, err := aws.ParsePriceTable(raw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]map[string]float64{"us-east-1": {"m5.large": 0.096, "m5.metal": 4.608}}, table.Prices); diff != "" {
		t.Error(diff)
	}
}

// The committed tables are in the format the provider reads, and every
// partition's fallback region is in its table.
func TestCommittedTables(t *testing.T) {
	for partition, region := range map[string]string{"aws": "us-east-1", "aws-cn": "cn-north-1", "aws-us-gov": "us-gov-west-1"} {
		raw, err := os.ReadFile("../../pkg/cloudprovider/aws/prices/" + partition + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		table, err := aws.ParsePriceTable(raw)
		if err != nil {
			t.Fatalf("%s: %v", partition, err)
		}
		if len(table.Prices[region]) < 100 {
			t.Errorf("%s: %d prices for %s", partition, len(table.Prices[region]), region)
		}
	}
}
