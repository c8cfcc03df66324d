package sim

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Kubelet stands in for the kubelet a booted instance runs: it registers
// the instance's Node after the launch latency and stops when the instance
// stops. Capstan's controllers only react to what it writes.
type Kubelet interface {
	// Launch registers node at (or after) registerAt.
	Launch(ctx context.Context, node *corev1.Node, registerAt time.Time)
	// Stop is called when the instance stops or terminates.
	Stop(ctx context.Context, nodeName string)
}

// MemoryKubelet keeps Nodes in memory, for `capstan simulate` and tests:
// Due hands out the nodes whose registration time has come.
type MemoryKubelet struct {
	mu      sync.Mutex
	pending []pendingNode
	stopped map[string]bool
}

type pendingNode struct {
	node *corev1.Node
	at   time.Time
}

// NewMemoryKubelet returns an empty in-memory kubelet.
func NewMemoryKubelet() *MemoryKubelet { return &MemoryKubelet{stopped: map[string]bool{}} }

// Launch queues the node.
func (k *MemoryKubelet) Launch(_ context.Context, node *corev1.Node, registerAt time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pending = append(k.pending, pendingNode{node: node, at: registerAt})
}

// Stop records that the node's instance stopped. A Node not registered
// yet never will be: an instance that stopped or terminated boots no
// kubelet (as simapi.Kubelet gives up its registration).
func (k *MemoryKubelet) Stop(_ context.Context, nodeName string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped[nodeName] = true
	k.pending = slices.DeleteFunc(k.pending, func(p pendingNode) bool { return p.node.Name == nodeName })
}

// Due returns, and forgets, the nodes to register by now.
func (k *MemoryKubelet) Due(now time.Time) []*corev1.Node {
	k.mu.Lock()
	defer k.mu.Unlock()
	var due []*corev1.Node
	rest := k.pending[:0]
	for _, p := range k.pending {
		if p.at.After(now) {
			rest = append(rest, p)
		} else {
			due = append(due, p.node)
		}
	}
	k.pending = rest
	return due
}

// Next is the earliest registration still queued, so a virtual-time loop
// knows when to wake.
func (k *MemoryKubelet) Next() (time.Time, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var next time.Time
	for _, p := range k.pending {
		if next.IsZero() || p.at.Before(next) {
			next = p.at
		}
	}
	return next, !next.IsZero()
}

// Stopped reports whether the node's instance has stopped.
func (k *MemoryKubelet) Stopped(nodeName string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.stopped[nodeName]
}
