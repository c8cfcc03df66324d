package crd_test

import "testing"

// referenceCapacityBufferCRD is the reference's CapacityBuffer CRD
// (autoscaling.x-k8s.io/v1beta1 as of v1.14.1, sig-autoscaling's API); its
// header names the source and licence.
const referenceCapacityBufferCRD = "testdata/autoscaling.x-k8s.io_capacitybuffers.v1.14.1.yaml"

// allowedCapacityBufferDifferences: none. docs/api.md lists any for users.
var allowedCapacityBufferDifferences = map[string]string{}

func TestCapacityBufferCRDMatchesTheReference(t *testing.T) {
	checkAgainstReference(t, referenceCapacityBufferCRD, allowedCapacityBufferDifferences)
}
