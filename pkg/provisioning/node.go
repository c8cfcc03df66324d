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
	// capacity counts against its NodePool's limits.
	capacity scheduling.Resources
}

// newNodeData prepares a node. An in-flight NodeClaim runs no pods yet,
// but the daemonsets that will run on it already hold their host ports:
// its allocatable (what it was sized for) counts their requests.
func newNodeData(n *Node, daemons []*podData) *nodeData {
	d := &nodeData{node: n, free: scheduling.NewResources(n.Allocatable), capacity: scheduling.NewResources(n.Capacity)}
	if n.Requested != nil {
		d.free = d.free.Sub(*n.Requested)
		d.hostPorts = append(d.hostPorts, n.HostPorts...)
	} else {
		for _, p := range n.Pods {
			d.free = d.free.Sub(scheduling.PodRequests(p))
			d.hostPorts = append(d.hostPorts, scheduling.PodHostPorts(p)...)
		}
	}
	if n.InFlight {
		for _, ds := range daemons {
			if len(ds.hostPorts) > 0 && d.runs(ds) {
				d.hostPorts = append(d.hostPorts, ds.hostPorts...)
			}
		}
	}
	return d
}

// runs reports whether a daemonset's pod would run on the node.
func (n *nodeData) runs(ds *podData) bool {
	if scheduling.Tolerates(ds.pod.Spec.Tolerations, n.node.Taints) != nil {
		return false
	}
	for _, v := range ds.variants {
		if v.reqs.Matches(n.node.Labels) == nil {
			return true
		}
	}
	return false
}

// fits reports whether kube-scheduler would place the pod here, taints
// aside (the solver checks them, as its pass decides): the node is not
// being deleted, labels match, resources and host ports are free.
func (n *nodeData) fits(p *podData, reqs scheduling.Requirements) bool {
	if n.node.Deleting || !p.requests.Fits(n.free) {
		return false
	}
	return reqs.Matches(n.node.Labels) == nil && !scheduling.PortsConflict(n.hostPorts, p.hostPorts)
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

// Misfit says why kube-scheduler would never place pod on node for a
// reason other than room: a label its node selector or required affinity
// needs, a taint it does not tolerate, a host port taken. "" when only
// room (or nothing) stands in the way.
func Misfit(pod *corev1.Pod, node *Node) string {
	matched := false
	var mismatch error
	for _, term := range requiredTerms(pod) {
		if err := term.Matches(node.Labels); err != nil {
			mismatch = err
			continue
		}
		matched = true
		break
	}
	if !matched && mismatch != nil {
		return mismatch.Error()
	}
	if err := scheduling.Tolerates(pod.Spec.Tolerations, node.Taints); err != nil {
		return err.Error()
	}
	var used []scheduling.HostPort
	for _, p := range node.Pods {
		used = append(used, scheduling.PodHostPorts(p)...)
	}
	if scheduling.PortsConflict(used, scheduling.PodHostPorts(pod)) {
		return "a host port the pod needs is taken"
	}
	return ""
}
