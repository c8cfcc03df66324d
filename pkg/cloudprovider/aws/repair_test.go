package aws

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// The reference's list, aws/karpenter-provider-aws v1.14.1
// pkg/cloudprovider/cloudprovider.go RepairPolicies.
func TestRepairPoliciesAreTheReferences(t *testing.T) {
	want := []cloudprovider.RepairPolicy{
		{ConditionType: corev1.NodeReady, ConditionStatus: corev1.ConditionFalse, TolerationDuration: 30 * time.Minute},
		{ConditionType: corev1.NodeReady, ConditionStatus: corev1.ConditionUnknown, TolerationDuration: 30 * time.Minute},
		{ConditionType: "AcceleratedHardwareReady", ConditionStatus: corev1.ConditionFalse, TolerationDuration: 10 * time.Minute},
		{ConditionType: "StorageReady", ConditionStatus: corev1.ConditionFalse, TolerationDuration: 30 * time.Minute},
		{ConditionType: "NetworkingReady", ConditionStatus: corev1.ConditionFalse, TolerationDuration: 30 * time.Minute},
		{ConditionType: "KernelReady", ConditionStatus: corev1.ConditionFalse, TolerationDuration: 30 * time.Minute},
		{ConditionType: "ContainerRuntimeReady", ConditionStatus: corev1.ConditionFalse, TolerationDuration: 30 * time.Minute},
	}
	if diff := cmp.Diff(want, (&Provider{}).RepairPolicies()); diff != "" {
		t.Errorf("RepairPolicies (-want +got):\n%s", diff)
	}
}
