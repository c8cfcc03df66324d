package provisioning

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// nodeData is an existing node or in-flight NodeClaim during a solve.
type nodeData struct {
	node      *Node
	free      scheduling.Resources
	hostPorts []scheduling.HostPort
}

func newNodeData(n *Node) *nodeData {
	d := &nodeData{node: n, free: scheduling.NewResources(n.Allocatable)}
	for _, p := range n.Pods {
		d.free = d.free.Sub(scheduling.PodRequests(p))
		d.hostPorts = append(d.hostPorts, scheduling.PodHostPorts(p)...)
	}
	return d
}

// fits reports whether kube-scheduler would place the pod here: the node
// is not being deleted, taints (the disrupted taint included) are
// tolerated, labels match, resources and host ports are free.
func (n *nodeData) fits(p *podData, reqs scheduling.Requirements) bool {
	if n.node.Deleting || !p.requests.Fits(n.free) {
		return false
	}
	if reqs.Matches(n.node.Labels) != nil || scheduling.PortsConflict(n.hostPorts, p.hostPorts) {
		return false
	}
	return scheduling.Tolerates(p.pod.Spec.Tolerations, n.node.Taints) == nil
}

// domain is the node's topology domain for key, its label's value; a
// node without the label is in no domain of that key.
func (n *nodeData) domain(key string) (string, bool) {
	if v, ok := n.node.Labels[key]; ok {
		return v, true
	}
	if key == corev1.LabelHostname {
		return n.node.Name, true
	}
	return "", false
}

func (n *nodeData) add(p *podData) {
	n.free = n.free.Sub(p.requests)
	n.hostPorts = append(n.hostPorts, p.hostPorts...)
}
