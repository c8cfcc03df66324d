package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
