package nodeclaim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/controllers/index"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
)

// Controller runs NodeClaims' lifecycle.
type Controller struct {
	client client.Client
	// reader reads past the informer cache: a launch must see whether the
	// NodeClaim already launched, or a stale cache launches it twice.
	reader   client.Reader
	applier  *apply.Applier
	clock    clock.Clock
	timeouts lifecycle.Timeouts
	workers  int
}

// Deps are what the lifecycle controller works with.
type Deps struct {
	// Client reads NodeClaims and Nodes (the manager's cached client).
	Client client.Client
	// Reader reads past the informer cache (the manager's API reader).
	Reader client.Reader
	// Applier applies the lifecycle's effects; the controller reads its
	// launch attempts back.
	Applier *apply.Applier
	Clock   clock.Clock
}

// DefaultMaxConcurrentReconciles is the lifecycle controller's workers
// by default: the reference core's at one CPU (kubernetes-sigs/karpenter
// pkg/controllers/nodeclaim/lifecycle/controller.go, minReconciles), so a
// scale-up's NodeClaims launch side by side, each launch taking seconds
// on a real cloud (docs/aws.md, "Launch concurrency").
const DefaultMaxConcurrentReconciles = 1000

// Options configure the lifecycle controller.
type Options struct {
	// Timeouts bound launch and registration.
	Timeouts lifecycle.Timeouts
	// MaxConcurrentReconciles bounds the NodeClaims reconciled, and so
	// launched, at once; zero is DefaultMaxConcurrentReconciles.
	MaxConcurrentReconciles int
}

// New builds the lifecycle controller.
func New(deps Deps, opts Options) *Controller {
	workers := opts.MaxConcurrentReconciles
	if workers <= 0 {
		workers = DefaultMaxConcurrentReconciles
	}
	return &Controller{client: deps.Client, reader: deps.Reader, applier: deps.Applier, clock: deps.Clock, timeouts: opts.Timeouts, workers: workers}
}

// Reconcile gathers the NodeClaim and its Node, asks lifecycle.Step what
// to do and applies it.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &v1.NodeClaim{}
	if err := c.client.Get(ctx, req.NamespacedName, nc); err != nil {
		if apierrors.IsNotFound(err) {
			c.applier.Attempts().Forget(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if nc.DeletionTimestamp != nil {
		c.applier.Attempts().Forget(nc.Name)
		return reconcile.Result{}, nil // the termination controller's
	}
	if nc.Status.ProviderID == "" {
		latest := &v1.NodeClaim{}
		if err := c.reader.Get(ctx, req.NamespacedName, latest); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("reading nodeclaim %s before launch, %w", nc.Name, err))
		}
		if latest.Status.ProviderID != "" || latest.DeletionTimestamp != nil {
			return reconcile.Result{}, nil // launched already (the cache lags) or going away
		}
		nc = latest
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("nodeclaim", nc.Name))
	node, err := index.NodeOf(ctx, c.client, nc)
	if err != nil {
		return reconcile.Result{}, err
	}
	_, effs := lifecycle.Step(nc, node, c.clock.Now(), c.timeouts, c.applier.Attempts().Get(nc.Name))
	requeue, err := c.applier.Apply(ctx, effs)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("applying the lifecycle of nodeclaim %s, %w", nc.Name, err)
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// Register watches NodeClaims and the Nodes that belong to them; call
// index.Register first.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("nodeclaim.lifecycle").
		// The work queue never hands one NodeClaim to two workers at once.
		WithOptions(controller.Options{MaxConcurrentReconciles: c.workers}).
		For(&v1.NodeClaim{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			ncs := &v1.NodeClaimList{}
			if err := c.client.List(ctx, ncs, client.MatchingFields{index.ProviderID: o.(*corev1.Node).Spec.ProviderID}); err != nil {
				return nil
			}
			var out []reconcile.Request
			for _, nc := range ncs.Items {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&nc)})
			}
			return out
		})).
		Complete(c)
}
