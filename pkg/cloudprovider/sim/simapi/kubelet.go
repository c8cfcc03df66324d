package simapi

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
)

// Kubelet implements sim.Kubelet against the API server: it writes
// Nodes there, and kwok (managing nodes labelled
// sim.capstan.dev/kubelet=kwok) then keeps them Ready and runs their pods.
type Kubelet struct {
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
func (k *Kubelet) Launch(ctx context.Context, node *corev1.Node, registerAt time.Time) {
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

func (k *Kubelet) isRegistering(name string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.registering[name]
}

func (k *Kubelet) done(name string) {
	k.mu.Lock()
	delete(k.registering, name)
	k.mu.Unlock()
}

// Stop takes the node away from kwok, so its heartbeat stops and it goes
// NotReady, as a stopped instance's node does.
func (k *Kubelet) Stop(ctx context.Context, nodeName string) {
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
