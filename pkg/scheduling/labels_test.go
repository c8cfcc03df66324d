package scheduling

import (
	"slices"
	"testing"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestWellKnownLabels(t *testing.T) {
	keys := WellKnownLabels()
	// Karpenter core's 8 (with kubernetes.io/hostname) and the 29 the
	// reference AWS provider adds (pkg/apis/v1/labels.go at v1.14.1).
	if got := keys.Len(); got != 37 {
		t.Errorf("WellKnownLabels has %d keys, want 37", got)
	}
	for key := range keys {
		if !IsWellKnown(key) {
			t.Errorf("IsWellKnown(%q) = false, but WellKnownLabels lists it", key)
		}
	}
	for _, key := range []string{"", "team", v1.NodeRegisteredLabelKey, v1.InterruptibleLabelKey, "karpenter.k8s.aws/instance-pods"} {
		if IsWellKnown(key) {
			t.Errorf("IsWellKnown(%q) = true", key)
		}
	}
	// A fresh set each call: changing one must not leak into the next.
	keys.Delete(v1.LabelZone)
	if !WellKnownLabels().Has(v1.LabelZone) {
		t.Error("WellKnownLabels shares state between calls")
	}
}

// Every key a provider describes a type by is well known: a requirement
// on it filters instance types and is not stamped on nodes.
func TestInstanceTypeLabelsAreWellKnown(t *testing.T) {
	for _, key := range InstanceTypeLabels() {
		if !IsWellKnown(key) {
			t.Errorf("%s describes instance types but is not well known", key)
		}
	}
	for _, key := range []string{v1.LabelZone, v1.CapacityTypeLabelKey, v1.LabelCapacityReservationID, v1.LabelZoneID, v1.LabelRegion} {
		if slices.Contains(InstanceTypeLabels(), key) {
			t.Errorf("%s is an offering's label, not the type's", key)
		}
	}
}
