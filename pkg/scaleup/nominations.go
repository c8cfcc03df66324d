package scaleup

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Nominations remembers, for each pending pod, the NodeClaim the last
// decision planned it onto. When that NodeClaim's node registers without
// fitting the pod (a label, taint or host port the plan did not expect),
// launching another NodeClaim for it would register the same way, and
// again, a node every batch window: the pod is reported instead
// (NominatedNodeMismatch) until its planned node fits it or it goes.
// Both the controller and simulate keep one; the zero value is ready.
type Nominations struct {
	byPod map[types.NamespacedName]string
}

// mismatched takes out of pods those whose planned NodeClaim has
// registered as a node that can never take them, as unplaced results.
func (n *Nominations) mismatched(pods []*corev1.Pod, nodes []*provisioning.Node) ([]*corev1.Pod, []provisioning.Unplaced) {
	if len(n.byPod) == 0 {
		return pods, nil
	}
	registered := map[string]*provisioning.Node{}
	for _, node := range nodes {
		// Until Capstan has synced the NodeClaim's labels and taints onto
		// it (the registered label), a node cannot be judged.
		if node.NodeClaim != "" && !node.InFlight && !node.Deleting && node.Labels[v1.NodeRegisteredLabelKey] == "true" {
			registered[node.NodeClaim] = node
		}
	}
	kept := make([]*corev1.Pod, 0, len(pods))
	var out []provisioning.Unplaced
	for _, p := range pods {
		claim := n.byPod[keyOf(p)]
		node := registered[claim]
		if node == nil {
			kept = append(kept, p)
			continue
		}
		why := provisioning.Misfit(p, node)
		if why == "" {
			kept = append(kept, p)
			continue
		}
		out = append(out, provisioning.Unplaced{Pod: p, Reason: provisioning.ReasonNominatedNodeMismatch, Message: fmt.Sprintf(
			"planned onto nodeclaim %s, but its node %s registered without fitting the pod (%s); not launching another node for it", claim, node.Name, why)})
	}
	return kept, out
}

// record remembers the NodeClaims this decision planned pods onto, and
// keeps the mismatched pods' so they stay reported; everything else is
// forgotten (bound or deleted pods are no longer pending).
func (n *Nominations) record(d Decision, inFlight map[string]bool, mismatched []provisioning.Unplaced) {
	next := make(map[types.NamespacedName]string, len(n.byPod))
	for _, u := range mismatched {
		next[keyOf(u.Pod)] = n.byPod[keyOf(u.Pod)]
	}
	for i, c := range d.Result.NewNodeClaims {
		for _, p := range c.Pods {
			if !state.IsVirtual(p) {
				next[keyOf(p)] = d.NodeClaims[i].Name
			}
		}
	}
	for _, nom := range d.Result.Nominations {
		if inFlight[nom.NodeName] {
			next[keyOf(nom.Pod)] = nom.NodeName
		}
	}
	n.byPod = next
}

// keyOf names a pod by namespace and name: pods read by simulate have no
// UID, and a pod recreated under its name is judged afresh anyway.
func keyOf(p *corev1.Pod) types.NamespacedName {
	return types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
}
