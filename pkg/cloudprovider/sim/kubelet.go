package sim

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
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

// APIKubelet writes Nodes to the API server; kwok (managing nodes labelled
// sim.capstan.dev/kubelet=kwok) then keeps them Ready and runs their pods.
type APIKubelet struct {
	Client client.Client
	Clock  clock.Clock

	mu sync.Mutex
	// registering are the nodes whose registration is under way; Stop
	// takes a node out, and its registration gives up.
	registering map[string]bool
}

// Registration retries back off from registerRetry to maxRegisterRetry.
const (
	registerRetry    = time.Second
	maxRegisterRetry = 30 * time.Second
)

// Launch creates the Node once the launch latency has passed and, as a
// real kubelet does, keeps trying until it is registered (an API server
// restarting, say) or the instance stops.
func (k *APIKubelet) Launch(ctx context.Context, node *corev1.Node, registerAt time.Time) {
	k.mu.Lock()
	if k.registering == nil {
		k.registering = map[string]bool{}
	}
	k.registering[node.Name] = true
	k.mu.Unlock()
	go func() {
		defer k.done(node.Name)
		if d := registerAt.Sub(k.Clock.Now()); d > 0 {
			select {
			case <-ctx.Done():
				return
			case <-k.Clock.After(d):
			}
		}
		ctx := context.WithoutCancel(ctx)
		status := node.Status
		for wait := registerRetry; ; wait = min(2*wait, maxRegisterRetry) {
			if !k.isRegistering(node.Name) {
				return
			}
			created := node.DeepCopy()
			err := k.Client.Create(ctx, created)
			if err == nil || errors.IsAlreadyExists(err) {
				node = created
				break
			}
			log.FromContext(ctx).Error(err, "registering node, retrying", "node", node.Name, "after", wait)
			<-k.Clock.After(wait)
		}
		// A merge patch, not an update: kwok writes the node's conditions
		// at the same time.
		base := node.DeepCopy()
		node.Status.Capacity, node.Status.Allocatable = status.Capacity, status.Allocatable
		if err := k.Client.Status().Patch(ctx, node, client.MergeFrom(base)); err != nil {
			log.FromContext(ctx).Error(err, "reporting node capacity", "node", node.Name)
		}
	}()
}

func (k *APIKubelet) isRegistering(name string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.registering[name]
}

func (k *APIKubelet) done(name string) {
	k.mu.Lock()
	delete(k.registering, name)
	k.mu.Unlock()
}

// Stop takes the node away from kwok, so its heartbeat stops and it goes
// NotReady, as a stopped instance's node does.
func (k *APIKubelet) Stop(ctx context.Context, nodeName string) {
	k.done(nodeName)
	node := &corev1.Node{}
	if err := k.Client.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		return
	}
	patch := client.MergeFrom(node.DeepCopy())
	delete(node.Labels, simv1alpha1.LabelKubelet)
	if err := k.Client.Patch(ctx, node, patch); err != nil && !errors.IsNotFound(err) {
		log.FromContext(ctx).Error(err, "stopping node", "node", nodeName)
	}
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

// Stop records that the node's instance stopped.
func (k *MemoryKubelet) Stop(_ context.Context, nodeName string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped[nodeName] = true
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

// ClientNodeClasses reads SimNodeClasses through a (cache-backed) client.
type ClientNodeClasses struct {
	Client client.Reader
}

// SimNodeClass implements NodeClasses.
func (n ClientNodeClasses) SimNodeClass(ctx context.Context, name string) (*simv1alpha1.SimNodeClass, error) {
	nc := &simv1alpha1.SimNodeClass{}
	if err := n.Client.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
		return nil, fmt.Errorf("getting simnodeclass %s, %w", name, err)
	}
	return nc, nil
}
