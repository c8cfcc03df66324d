package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Durations that do not parse or overflow are errors at their field,
// every one of them, not the decoder's first bare error.
func TestMalformedValuesNameTheirField(t *testing.T) {
	const doc = `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
spec:
  launchLatency: 9999999999h
  reservations: [{id: cr-1, instanceType: c5.xlarge, zone: us-west-2a, type: open, ownerID: "111122223333", count: 1, endTime: soon}]
  events: [{at: 1m, type: SpotInterruption, instanceType: c5.xlarge, zone: "*"}, {at: 1x, type: SpotInterruption, instanceType: c5.xlarge, zone: "*"}]
`
	_, err := DecodeProfile("cloud.yaml, document 1 (CloudProfile c)", []byte(doc))
	var pe *ProfileError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v, want a *ProfileError", err)
	}
	var got []string
	for _, e := range pe.Errs {
		got = append(got, e.Error())
	}
	want := []string{
		`spec.launchLatency: Invalid value: "9999999999h": time: invalid duration "9999999999h"`,
		`spec.reservations[0].endTime: Invalid value: "soon": time: invalid duration "soon"`,
		`spec.events[1].at: Invalid value: "1x": time: unknown unit "x" in duration "1x"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if prefix := "cloud.yaml, document 1 (CloudProfile c): " + want[0] + "\n"; !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("error %q, want it to start %q", err, prefix)
	}
}
