package disruption

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/state"
)

// placeVirtual places the snapshot's virtual pods where the provisioner
// would (holding ones before the pending pods, yielding ones after) and
// treats those that fit existing or in-flight capacity as bound there:
// copies with Spec.NodeName set, added to their nodes' pods and requests.
// A candidate then carries them as pods that must move, and no other
// candidate's pods may take their room, so a command is valid only if
// every virtual pod that fits now still fits afterwards: consolidation
// keeps buffers and booked capacity (docs/batch.md, "Capacity
// buffers"). Virtual pods that fit nowhere now are the provisioner's to
// launch for; they hold nothing yet and block no command. The nodes are
// copied where changed; in's are not modified.
func placeVirtual(in provisioning.Input) ([]*provisioning.Node, []*corev1.Pod) {
	if len(in.Holding) == 0 && len(in.Yielding) == 0 {
		return in.Nodes, nil
	}
	byNode := map[string][]*corev1.Pod{}
	var placed []*corev1.Pod
	for _, n := range provisioning.Solve(in).Nominations {
		if !state.IsVirtual(n.Pod) {
			continue
		}
		cp := n.Pod.DeepCopy()
		cp.Spec.NodeName = n.NodeName
		byNode[n.NodeName] = append(byNode[n.NodeName], cp)
		placed = append(placed, cp)
	}
	nodes := make([]*provisioning.Node, len(in.Nodes))
	for i, n := range in.Nodes {
		nodes[i] = n
		pods := byNode[n.Name]
		if len(pods) == 0 {
			continue
		}
		cp := *n
		cp.Pods = append(append([]*corev1.Pod{}, n.Pods...), pods...)
		if n.Requested != nil {
			requested := *n.Requested
			cp.HostPorts = slices.Clone(n.HostPorts)
			for _, p := range pods {
				requested = requested.Add(scheduling.PodRequests(p))
				cp.HostPorts = append(cp.HostPorts, scheduling.PodHostPorts(p)...)
			}
			cp.Requested = &requested
		}
		// Groups were counted without the virtual pods; nil counts Pods.
		cp.Groups = nil
		nodes[i] = &cp
	}
	return nodes, placed
}
