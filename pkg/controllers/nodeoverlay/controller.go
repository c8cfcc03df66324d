package nodeoverlay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/overlay"
)

// Name is the controller's name in logs and metrics.
const Name = "nodeoverlay"

// Resync is how often the overlays are evaluated again without a change
// to them or to a NodePool: the cloud's instance types may change under
// them (the reference's controller requeues every 6 hours).
const Resync = 6 * time.Hour

// all is the one request every event maps to: one evaluation compares
// every overlay with every other, so which one changed does not matter.
var all = reconcile.Request{NamespacedName: types.NamespacedName{Name: "all"}}

// Controller sets the NodeOverlays' conditions.
type Controller struct {
	client client.Client
	cloud  cloudprovider.CloudProvider
	clock  clock.Clock
}

// Deps are what the controller works with.
type Deps struct {
	// Client lists NodeOverlays and NodePools and patches the overlays'
	// status.
	Client client.Client
	// Cloud answers each NodePool's instance types.
	Cloud cloudprovider.CloudProvider
	// Clock stamps condition transitions.
	Clock clock.Clock
}

// New returns the NodeOverlay controller.
func New(deps Deps) *Controller {
	return &Controller{client: deps.Client, cloud: deps.Cloud, clock: deps.Clock}
}

// Register adds the controller to mgr: it evaluates the overlays when one
// of them or a NodePool changes, and every Resync.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	toAll := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request { return []reconcile.Request{all} })
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		Watches(&v1alpha1.NodeOverlay{}, toAll).
		Watches(&v1.NodePool{}, toAll).
		Complete(c)
	if err != nil {
		return fmt.Errorf("registering %s controller, %w", Name, err)
	}
	return nil
}

// Reconcile gathers the overlays, the NodePools and their instance types,
// evaluates the overlays as every decision applies them and patches the
// conditions that changed.
func (c *Controller) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	overlays, nps := &v1alpha1.NodeOverlayList{}, &v1.NodePoolList{}
	if err := c.client.List(ctx, overlays); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing nodeoverlays, %w", err)
	}
	if len(overlays.Items) == 0 {
		return reconcile.Result{}, nil
	}
	if err := c.client.List(ctx, nps); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing nodepools, %w", err)
	}
	res, _, err := overlay.InstanceTypes(ctx, c.cloud, nps.Items, overlays.Items)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("evaluating nodeoverlays, %w", err)
	}
	now := c.clock.Now()
	var errs []error
	for i := range overlays.Items {
		o := &overlays.Items[i]
		conds := overlay.Conditions(o, res.Verdicts[o.Name], now)
		if equality.Semantic.DeepEqual(conds, o.Status.Conditions) {
			continue
		}
		patched := o.DeepCopy()
		patched.Status.Conditions = conds
		// Optimistic lock: the conditions list is replaced whole, and an
		// overlay changed since it was listed is evaluated again anyway.
		if err := c.client.Status().Patch(ctx, patched, client.MergeFromWithOptions(o, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("patching the status of nodeoverlay %s, %w", o.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: Resync}, nil
}
