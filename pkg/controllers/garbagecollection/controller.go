package garbagecollection

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
)

// Options tune garbage collection.
type Options struct {
	// Interval between collections.
	Interval time.Duration
	// Grace is how old an instance without a NodeClaim must be before it
	// counts as leaked.
	Grace time.Duration
}

// Controller collects leaked instances and orphaned NodeClaims.
type Controller struct {
	client   client.Client
	cloud    cloudprovider.CloudProvider
	recorder events.EventRecorder
	clock    clock.Clock
	opts     Options
}

// New builds the garbage collector.
func New(c client.Client, cloud cloudprovider.CloudProvider, recorder events.EventRecorder, clk clock.Clock, opts Options) *Controller {
	return &Controller{client: c, cloud: cloud, recorder: recorder, clock: clk, opts: opts}
}

// Reconcile collects once and comes back after the interval.
func (c *Controller) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	instances, err := c.cloud.List(ctx)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("listing instances, %w", err)
	}
	claims := &v1.NodeClaimList{}
	if err := c.client.List(ctx, claims); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing nodeclaims, %w", err)
	}
	d := lifecycle.Collect(instances, claims.Items, c.clock.Now(), c.opts.Grace)
	for _, inst := range d.Terminate {
		log.FromContext(ctx).Info("terminating leaked instance", "providerID", inst.Status.ProviderID, "nodeclaim", inst.Name)
		if err := cloudprovider.IgnoreNodeClaimNotFound(c.cloud.Delete(ctx, inst)); err != nil {
			return reconcile.Result{}, fmt.Errorf("terminating leaked instance %s, %w", inst.Status.ProviderID, err)
		}
		// Its Node, if it registered one, has no NodeClaim to take it
		// away: without this it would stay NotReady for ever.
		if err := c.deleteNodes(ctx, inst.Status.ProviderID); err != nil {
			return reconcile.Result{}, err
		}
	}
	for _, nc := range d.Delete {
		c.recorder.Eventf(nc, nil, corev1.EventTypeWarning, "InstanceGone", "Delete", "instance %s no longer exists", nc.Status.ProviderID)
		if err := client.IgnoreNotFound(c.client.Delete(ctx, nc)); err != nil {
			return reconcile.Result{}, fmt.Errorf("deleting orphaned nodeclaim %s, %w", nc.Name, err)
		}
	}
	return reconcile.Result{RequeueAfter: c.opts.Interval}, nil
}

// deleteNodes deletes the Nodes of the instance with providerID.
func (c *Controller) deleteNodes(ctx context.Context, providerID string) error {
	nodes := &corev1.NodeList{}
	if err := c.client.List(ctx, nodes); err != nil {
		return fmt.Errorf("listing nodes, %w", err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if n.Spec.ProviderID != providerID {
			continue
		}
		log.FromContext(ctx).Info("deleting the node of a leaked instance", "node", n.Name, "providerID", providerID)
		if err := client.IgnoreNotFound(c.client.Delete(ctx, n)); err != nil {
			return fmt.Errorf("deleting node %s of leaked instance %s, %w", n.Name, providerID, err)
		}
	}
	return nil
}

// Register starts the periodic collection.
func (c *Controller) Register(mgr manager.Manager) error {
	start := make(chan event.GenericEvent, 1)
	start <- event.GenericEvent{Object: &v1.NodeClaim{}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("garbagecollection").
		WatchesRawSource(source.Channel(start, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "garbagecollection"}}}
		}))).
		Complete(c)
}
