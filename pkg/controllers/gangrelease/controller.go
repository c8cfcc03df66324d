package gangrelease

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/controllers/index"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
)

// Controller releases gangs' failed launches.
type Controller struct {
	client  client.Client
	applier *apply.Applier
	clock   clock.Clock
	opts    Options
}

// Deps are what the controller works with.
type Deps struct {
	// Client lists NodeClaims and the pods on their nodes (the manager's
	// cached client, with index.Register's indexes).
	Client  client.Client
	Applier *apply.Applier
	Clock   clock.Clock
}

// Options tune the release.
type Options struct {
	// LaunchTimeout is how long a gang's launch may take to have every
	// NodeClaim Launched (--atomic-group-launch-timeout).
	LaunchTimeout time.Duration
}

// New builds the controller.
func New(deps Deps, opts Options) *Controller {
	return &Controller{client: deps.Client, applier: deps.Applier, clock: deps.Clock, opts: opts}
}

// Reconcile looks at every gang's launch at once: they are few, and one
// launch's NodeClaims are read together.
func (c *Controller) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	list := &v1.NodeClaimList{}
	if err := c.client.List(ctx, list); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing nodeclaims, %w", err)
	}
	var claims []*v1.NodeClaim
	var pods []*corev1.Pod
	for i := range list.Items {
		nc := &list.Items[i]
		if !launchedForGang(nc) {
			continue
		}
		claims = append(claims, nc)
		if nc.Status.NodeName == "" {
			continue
		}
		on := &corev1.PodList{}
		if err := c.client.List(ctx, on, client.MatchingFields{index.PodNode: nc.Status.NodeName}); err != nil {
			return reconcile.Result{}, fmt.Errorf("listing pods on node %s, %w", nc.Status.NodeName, err)
		}
		for j := range on.Items {
			pods = append(pods, &on.Items[j])
		}
	}
	if len(claims) == 0 {
		return reconcile.Result{}, nil
	}
	effs := lifecycle.ReleaseGroups(claims, lifecycle.NodesRunningPods(pods), c.clock.Now(), c.opts.LaunchTimeout)
	requeue, err := c.applier.Apply(ctx, effs)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("releasing gangs' launches, %w", err)
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

func launchedForGang(o client.Object) bool {
	return o.GetAnnotations()[gang.AtomicGroupLaunchAnnotationKey] != ""
}

// Register watches the NodeClaims launched for gangs; call
// index.Register first. Every change asks for one look at them all.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "gangrelease"}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("gangrelease").
		Watches(&v1.NodeClaim{}, all, builder.WithPredicates(predicate.NewPredicateFuncs(launchedForGang))).
		Complete(c)
}
