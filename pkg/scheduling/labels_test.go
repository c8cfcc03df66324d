package scheduling

import (
	"testing"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestWellKnownLabels(t *testing.T) {
	keys := WellKnownLabels()
	if got := keys.Len(); got != 22 {
		t.Errorf("WellKnownLabels has %d keys, want 22", got)
	}
	for key := range keys {
		if !IsWellKnown(key) {
			t.Errorf("IsWellKnown(%q) = false, but WellKnownLabels lists it", key)
		}
	}
	for _, key := range []string{"", "team", v1.NodeRegisteredLabelKey, v1.InterruptibleLabelKey, "karpenter.k8s.aws/instance-hypervisor"} {
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
