package aws

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// monitoringAgentToleration is how long the EKS node monitoring agent's
// accelerated-hardware condition is tolerated; its other conditions get
// the kubelet's (the reference's RepairPolicies).
const monitoringAgentToleration = 10 * time.Minute

// RepairPolicies implements CloudProvider: the reference's list
// (aws/karpenter-provider-aws pkg/cloudprovider/cloudprovider.go,
// RepairPolicies), the kubelet's Ready condition and the EKS node
// monitoring agent's conditions.
func (p *Provider) RepairPolicies() []cloudprovider.RepairPolicy {
	out := cloudprovider.KubeletRepairPolicies(cloudprovider.DefaultKubeletToleration)
	agent := []struct {
		condition  corev1.NodeConditionType
		toleration time.Duration
	}{
		{"AcceleratedHardwareReady", monitoringAgentToleration},
		{"StorageReady", cloudprovider.DefaultKubeletToleration},
		{"NetworkingReady", cloudprovider.DefaultKubeletToleration},
		{"KernelReady", cloudprovider.DefaultKubeletToleration},
		{"ContainerRuntimeReady", cloudprovider.DefaultKubeletToleration},
	}
	for _, a := range agent {
		out = append(out, cloudprovider.RepairPolicy{ConditionType: a.condition, ConditionStatus: corev1.ConditionFalse, TolerationDuration: a.toleration})
	}
	return out
}
