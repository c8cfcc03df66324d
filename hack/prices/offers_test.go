package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
