package simnodeclass

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// Name is the controller's name in logs and metrics.
const Name = "simnodeclass"

// DefaultRefreshPeriod is how often a SimNodeClass is resolved again when
// no reservation starts or ends sooner: free slots change as instances
// launch and terminate, with no event on the SimNodeClass.
const DefaultRefreshPeriod = time.Minute

// Reservations is the simulated cloud's view of its capacity reservations
// (the sim Cloud implements it). The result is the caller's to keep.
type Reservations interface {
	Reservations() []sim.Reservation
}

// Deps are what the controller works with.
type Deps struct {
	// Client reads SimNodeClasses and patches their status.
	Client client.Client
	// Reservations are read on every reconcile.
	Reservations Reservations
	// Clock is now for the resolver and condition transitions.
	Clock clock.Clock
}

// Options configure the controller.
type Options struct {
	// RefreshPeriod is the longest a status goes without being resolved
	// again; zero or negative means DefaultRefreshPeriod.
	RefreshPeriod time.Duration
}

// Controller keeps SimNodeClass status in step with the cloud's
// reservations.
type Controller struct {
	client       client.Client
	reservations Reservations
	clock        clock.Clock
	refresh      time.Duration
}

// New returns the SimNodeClass controller.
func New(deps Deps, opts Options) *Controller {
	refresh := opts.RefreshPeriod
	if refresh <= 0 {
		refresh = DefaultRefreshPeriod
	}
	return &Controller{client: deps.Client, reservations: deps.Reservations, clock: deps.Clock, refresh: refresh}
}

// Register adds the controller to mgr. Status-only updates (its own
// patches) are ignored; the requeue after each reconcile covers changes
// in the cloud.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&simv1alpha1.SimNodeClass{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(c)
	if err != nil {
		return fmt.Errorf("registering %s controller, %w", Name, err)
	}
	return nil
}

// Reconcile resolves the SimNodeClass with Step, patches its status with
// a merge patch of the status subresource (no resourceVersion, so no
// conflict) when it changed, and requeues for the next reservation change
// or refresh.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &simv1alpha1.SimNodeClass{}
	if err := c.client.Get(ctx, req.NamespacedName, nc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if nc.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	d := Step(nc, c.reservations.Reservations(), c.clock.Now(), c.refresh)
	if !equality.Semantic.DeepEqual(nc.Status, d.Status) {
		patched := nc.DeepCopy()
		patched.Status = d.Status
		if err := c.client.Status().Patch(ctx, patched, client.MergeFrom(nc)); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("updating simnodeclass %s status, %w", nc.Name, err))
		}
		log.FromContext(ctx).V(1).Info("updated simnodeclass status", "reservations", len(d.Status.CapacityReservations))
	}
	return reconcile.Result{RequeueAfter: d.RequeueAfter}, nil
}
