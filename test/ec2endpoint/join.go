package ec2endpoint

import (
	"context"
	"maps"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// joiningKubelet registers the Node of a launched instance only when its
// user data lets its node join the cluster; otherwise the instance runs
// and its Node never appears, as on EC2, and the endpoint records why.
// The simulated cloud hands it the Node during the launch, before the
// endpoint knows which offering (and so which user data) was launched:
// it holds the Node until the endpoint rules on the instance (joined).
type joiningKubelet struct {
	inner sim.Kubelet

	mu sync.Mutex
	// held are the Nodes of launches not yet ruled on, by instance id.
	held      map[string]heldNode
	notJoined map[string]string
}

// heldNode is a Node handed to the kubelet and when it registers.
type heldNode struct {
	node       *corev1.Node
	registerAt time.Time
}

func newJoiningKubelet(inner sim.Kubelet) *joiningKubelet {
	if inner == nil {
		inner = sim.NewMemoryKubelet()
	}
	return &joiningKubelet{inner: inner, held: map[string]heldNode{}, notJoined: map[string]string{}}
}

// Launch implements sim.Kubelet: the Node waits for joined.
func (k *joiningKubelet) Launch(_ context.Context, node *corev1.Node, registerAt time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.held[node.Spec.ProviderID[strings.LastIndexByte(node.Spec.ProviderID, '/')+1:]] = heldNode{node: node, registerAt: registerAt}
}

// joined rules on the launched instance: why is why its node would not
// join (whyNotJoining), empty when it joins. A Node that joins registers
// at the time the simulated cloud gave, with capacity as its kubelet
// reports it (nodeCapacity); one that does not never appears.
func (k *joiningKubelet) joined(ctx context.Context, inst sim.Instance, why string, capacity corev1.ResourceList) {
	k.mu.Lock()
	held, ok := k.held[inst.ID]
	delete(k.held, inst.ID)
	if ok && why != "" {
		k.notJoined[inst.ID] = why
	}
	k.mu.Unlock()
	switch {
	case !ok:
		// Stopped before the ruling: nothing to register.
	case why != "":
		log.FromContext(ctx).Info("instance launched, its node will not join", "instance", inst.ID, "reason", why)
	default:
		k.inner.Launch(ctx, reported(held.node, capacity), held.registerAt)
	}
}

// Stop implements sim.Kubelet.
func (k *joiningKubelet) Stop(ctx context.Context, nodeName string) {
	k.mu.Lock()
	maps.DeleteFunc(k.held, func(_ string, h heldNode) bool { return h.node.Name == nodeName })
	k.mu.Unlock()
	k.inner.Stop(ctx, nodeName)
}

// NotJoined are the instances launched whose Node never registers
// because of their user data, by instance id, with why.
func (s *Server) NotJoined() map[string]string {
	s.kubelet.mu.Lock()
	defer s.kubelet.mu.Unlock()
	return maps.Clone(s.kubelet.notJoined)
}
