package disrupter

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/disruption"
)

// Expiration deletes NodeClaims that have lived for their expireAfter
// (seed 004, disruption.Expire decides): forceful, so no budget or
// do-not-disrupt holds it; the drain honours PDBs and do-not-disrupt pods
// until the NodeClaim's terminationGracePeriod runs out.
type Expiration struct {
	client  client.Client
	applier *apply.Applier
	clock   clock.Clock
}

// ExpirationDeps are what the expiration controller works with.
type ExpirationDeps struct {
	// Client reads NodeClaims and their NodePools.
	Client  client.Client
	Applier *apply.Applier
	Clock   clock.Clock
}

// NewExpiration builds the expiration controller; it has no settings.
func NewExpiration(deps ExpirationDeps) *Expiration {
	return &Expiration{client: deps.Client, applier: deps.Applier, clock: deps.Clock}
}

// Reconcile deletes one NodeClaim once it has expired, and otherwise
// comes back when it will.
func (e *Expiration) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &v1.NodeClaim{}
	if err := e.client.Get(ctx, req.NamespacedName, nc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	now := e.clock.Now()
	effs, wake := disruption.Expire(nc, now)
	if len(effs) == 0 {
		if wake.IsZero() {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{RequeueAfter: max(wake.Sub(now), time.Nanosecond)}, nil
	}
	log.FromContext(ctx).Info("nodeclaim expired", "nodeclaim", nc.Name, "expireAfter", nc.Spec.ExpireAfter.String())
	if _, err := e.applier.Apply(ctx, effs); err != nil {
		return reconcile.Result{}, fmt.Errorf("expiring nodeclaim %s, %w", nc.Name, err)
	}
	return reconcile.Result{}, nil
}

// Register watches NodeClaims.
func (e *Expiration) Register(_ context.Context, mgr manager.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("expiration").For(&v1.NodeClaim{}).Complete(e)
}
