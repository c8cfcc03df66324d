package garbagecollection

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
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
	client  client.Client
	cloud   cloudprovider.CloudProvider
	applier *apply.Applier
	clock   clock.Clock
	opts    Options
}

// Deps are what the garbage collector works with.
type Deps struct {
	// Client lists NodeClaims.
	Client client.Client
	// Cloud lists the instances.
	Cloud cloudprovider.CloudProvider
	// Applier applies lifecycle.Collected.
	Applier *apply.Applier
	Clock   clock.Clock
}

// New builds the garbage collector.
func New(deps Deps, opts Options) *Controller {
	return &Controller{client: deps.Client, cloud: deps.Cloud, applier: deps.Applier, clock: deps.Clock, opts: opts}
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
	var nodes []corev1.Node
	if len(d.Terminate) > 0 {
		list := &corev1.NodeList{}
		if err := c.client.List(ctx, list); err != nil {
			return reconcile.Result{}, fmt.Errorf("listing nodes, %w", err)
		}
		nodes = list.Items
	}
	for _, inst := range d.Terminate {
		log.FromContext(ctx).Info("terminating leaked instance", "providerID", inst.Status.ProviderID, "nodeclaim", inst.Name)
	}
	if _, err := c.applier.Apply(ctx, lifecycle.Collected(d, nodes)); err != nil {
		return reconcile.Result{}, fmt.Errorf("collecting garbage, %w", err)
	}
	return reconcile.Result{RequeueAfter: c.opts.Interval}, nil
}

// Register starts the periodic collection.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	start := make(chan event.GenericEvent, 1)
	start <- event.GenericEvent{Object: &v1.NodeClaim{}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("garbagecollection").
		WatchesRawSource(source.Channel(start, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "garbagecollection"}}}
		}))).
		Complete(c)
}
