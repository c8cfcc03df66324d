package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

var now = time.Date(2026, 7, 2, 0, 0, 0, 0, time.UTC)

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
