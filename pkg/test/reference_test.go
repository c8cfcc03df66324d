package test

import (
	"math"
	"testing"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// The catalog is the benchmark's: 400 types, prices linear in size, spot
// in two zones and on-demand in three.
func TestReferenceInstanceTypes(t *testing.T) {
	its := ReferenceInstanceTypes()
	if len(its) != 400 || its[0].Name != "type-0" || its[399].Name != "type-399" {
		t.Fatalf("%d types from %s to %s, want type-0 … type-399", len(its), its[0].Name, its[len(its)-1].Name)
	}
	last := its[399]
	spot, onDemand := 0, 0
	for _, o := range last.Offerings {
		if want := 0.1*400 + 0.1*float64(800<<30)/1e9; math.Abs(o.Price-want) > 1e-9 {
			t.Errorf("offering %s at %v, want %v", o, o.Price, want)
		}
		switch o.CapacityType {
		case v1.CapacityTypeSpot:
			spot++
		case v1.CapacityTypeOnDemand:
			onDemand++
		}
	}
	if spot != 2 || onDemand != 3 {
		t.Errorf("%d spot and %d on-demand offerings, want 2 and 3", spot, onDemand)
	}
}
