package capacitybuffer

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	"github.com/capstan-dev/capstan/pkg/buffers"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
)

// Name is the controller's name in logs and metrics.
const Name = "capacitybuffer"

// Resync is how often a buffer is sized again without an event: its
// scalable object's replicas and template are read, not watched (the
// reference requeues every 30 seconds, pkg/controllers/capacitybuffer).
const Resync = 30 * time.Second

// Controller writes CapacityBuffers' status.
type Controller struct {
	client  client.Client
	clock   clock.Clock
	trigger func()

	mu sync.Mutex
	// placed is where the provisioner's last decision put each buffer's
	// virtual pods (Placed).
	placed map[types.NamespacedName]buffers.Placement
	events chan event.TypedGenericEvent[*autoscalingv1beta1.CapacityBuffer]
}

// Deps are what the controller works with.
type Deps struct {
	// Client reads buffers, PodTemplates and workloads (and their scale
	// subresource) and patches the buffers' status.
	Client client.Client
	// Clock stamps condition transitions.
	Clock clock.Clock
	// Trigger asks the provisioner for a solve: a buffer's size changed.
	Trigger func()
}

// New returns the CapacityBuffer controller.
func New(deps Deps) *Controller {
	return &Controller{client: deps.Client, clock: deps.Clock, trigger: deps.Trigger, placed: map[types.NamespacedName]buffers.Placement{},
		events: make(chan event.TypedGenericEvent[*autoscalingv1beta1.CapacityBuffer], 1024)}
}

// Placed records where the provisioner's latest decision put every
// buffer's virtual pods (buffers.Placements) and asks for the buffers it
// changed to be reconciled. The provisioner calls it after each decision.
func (c *Controller) Placed(p map[types.NamespacedName]buffers.Placement) {
	c.mu.Lock()
	changed := map[types.NamespacedName]bool{}
	for k, v := range p {
		if !equality.Semantic.DeepEqual(c.placed[k], v) {
			changed[k] = true
		}
	}
	for k := range c.placed {
		if _, ok := p[k]; !ok {
			changed[k] = true
		}
	}
	c.placed = maps.Clone(p)
	c.mu.Unlock()
	for k := range changed {
		cb := &autoscalingv1beta1.CapacityBuffer{}
		cb.Namespace, cb.Name = k.Namespace, k.Name
		select {
		case c.events <- event.TypedGenericEvent[*autoscalingv1beta1.CapacityBuffer]{Object: cb}:
		default:
			// Full: Resync reconciles the buffer soon anyway.
		}
	}
}

// Register adds the controller to mgr: a buffer is sized when it or a
// PodTemplate in its namespace changes, when the provisioner placed its
// pods anew, and every Resync.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&autoscalingv1beta1.CapacityBuffer{}).
		Watches(&corev1.PodTemplate{}, handler.EnqueueRequestsFromMapFunc(c.templateBuffers)).
		WatchesRawSource(source.Channel(c.events, &handler.TypedEnqueueRequestForObject[*autoscalingv1beta1.CapacityBuffer]{})).
		Complete(c)
	if err != nil {
		return fmt.Errorf("registering %s controller, %w", Name, err)
	}
	return nil
}

// templateBuffers are the buffers of a PodTemplate's namespace naming it.
func (c *Controller) templateBuffers(ctx context.Context, o client.Object) []reconcile.Request {
	list := &autoscalingv1beta1.CapacityBufferList{}
	if err := c.client.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, cb := range list.Items {
		if cb.Spec.PodTemplateRef != nil && cb.Spec.PodTemplateRef.Name == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&cb)})
		}
	}
	return out
}

// Reconcile sizes one buffer and patches its status if it changed.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cb := &autoscalingv1beta1.CapacityBuffer{}
	if err := c.client.Get(ctx, req.NamespacedName, cb); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	src, err := clusterstate.ResolveBuffer(ctx, c.client, c.client, cb)
	if err != nil {
		return reconcile.Result{}, err
	}
	now := c.clock.Now()
	status := buffers.Size(buffers.Input{Buffer: cb, Source: src, Now: now}).Status
	c.mu.Lock()
	placement, placed := c.placed[req.NamespacedName]
	c.mu.Unlock()
	if placed || ptr.Deref(status.Replicas, 0) == 0 {
		buffers.Provisioning(cb, &status, placement, now)
	}
	if equality.Semantic.DeepEqual(status, cb.Status) {
		return reconcile.Result{RequeueAfter: Resync}, nil
	}
	patched := cb.DeepCopy()
	patched.Status = status
	// Optimistic lock: the conditions list is replaced whole.
	if err := c.client.Status().Patch(ctx, patched, client.MergeFromWithOptions(cb, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("patching the status of capacitybuffer %s, %w", req.NamespacedName, err))
	}
	if !equality.Semantic.DeepEqual(status.Replicas, cb.Status.Replicas) && c.trigger != nil {
		c.trigger()
	}
	return reconcile.Result{RequeueAfter: Resync}, nil
}
