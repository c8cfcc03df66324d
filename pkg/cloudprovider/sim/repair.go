package sim

import (
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// RepairPolicies implements CloudProvider: the profile's repairPolicies,
// or the kubelet's (cloudprovider.KubeletRepairPolicies) when it names
// none.
func (c *Cloud) RepairPolicies() []cloudprovider.RepairPolicy {
	return RepairPoliciesOf(c.opts.Profile)
}

// RepairPoliciesOf are a profile's repair policies (see RepairPolicies).
func RepairPoliciesOf(p *simv1alpha1.CloudProfile) []cloudprovider.RepairPolicy {
	if len(p.Spec.RepairPolicies) == 0 {
		return cloudprovider.KubeletRepairPolicies(cloudprovider.DefaultKubeletToleration)
	}
	out := make([]cloudprovider.RepairPolicy, 0, len(p.Spec.RepairPolicies))
	for _, rp := range p.Spec.RepairPolicies {
		out = append(out, cloudprovider.RepairPolicy{ConditionType: corev1.NodeConditionType(rp.ConditionType),
			ConditionStatus: corev1.ConditionStatus(rp.ConditionStatus), TolerationDuration: rp.TolerationDuration.Duration})
	}
	return out
}

// stopLocked carries out a KubeletStop or InstanceStop event: the first
// count (all when unset) of the running instances matches picks, in id
// order, lose their kubelet without a notice; an InstanceStop also
// stops the instances, which the cloud then lists as stopped.
func (c *Cloud) stopLocked(ctx context.Context, e simv1alpha1.CloudEvent, matches func(*Instance) bool) {
	var picked []*Instance
	for _, id := range slices.Sorted(maps.Keys(c.state.Instances)) {
		if inst := c.state.Instances[id]; matches(inst) && !inst.KubeletStopped {
			picked = append(picked, inst)
		}
	}
	if e.Count != nil && *e.Count < len(picked) {
		picked = picked[:*e.Count]
	}
	for _, inst := range picked {
		inst.KubeletStopped = true
		if e.Type == simv1alpha1.EventInstanceStop {
			inst.State = InstanceStopped
		}
		c.stopNodeLocked(ctx, c.nodeName(inst))
	}
}
