package cloudprovider

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// RepairPolicy is one node condition that makes a node unhealthy: a Node
// whose condition ConditionType has had ConditionStatus for
// TolerationDuration is repaired (replaced), within its NodePool's
// repair budget (docs/disruption.md, "Node repair"). The reference's
// cloudprovider.RepairPolicy (pkg/cloudprovider/types.go).
type RepairPolicy struct {
	ConditionType      corev1.NodeConditionType
	ConditionStatus    corev1.ConditionStatus
	TolerationDuration time.Duration
}

// DefaultKubeletToleration is how long a node may be NotReady before it
// is repaired, as the AWS provider's kubelet policies
// (aws/karpenter-provider-aws pkg/cloudprovider/cloudprovider.go,
// RepairPolicies).
const DefaultKubeletToleration = 30 * time.Minute

// KubeletRepairPolicies are the policies every node has, whatever agent
// runs on it: its kubelet's Ready condition False (the kubelet reports a
// problem) or Unknown (the kubelet stopped reporting: the node is
// unreachable, its instance stopped), each for toleration.
func KubeletRepairPolicies(toleration time.Duration) []RepairPolicy {
	return []RepairPolicy{
		{ConditionType: corev1.NodeReady, ConditionStatus: corev1.ConditionFalse, TolerationDuration: toleration},
		{ConditionType: corev1.NodeReady, ConditionStatus: corev1.ConditionUnknown, TolerationDuration: toleration},
	}
}
