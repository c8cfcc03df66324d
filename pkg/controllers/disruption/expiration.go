package disruption

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/disruption"
)

// Expiration deletes NodeClaims that have lived for their expireAfter
// (seed 004): forceful, so no budget or do-not-disrupt holds it; the
// drain honours PDBs and do-not-disrupt pods until the NodeClaim's
// terminationGracePeriod runs out.
type Expiration struct {
	client   client.Client
	recorder events.EventRecorder
	clock    clock.Clock
	metrics  *Metrics
}

// NewExpiration builds the expiration controller.
func NewExpiration(c client.Client, recorder events.EventRecorder, clk clock.Clock, metrics *Metrics) *Expiration {
	return &Expiration{client: c, recorder: recorder, clock: clk, metrics: metrics}
}

// Reconcile deletes one NodeClaim once it has expired, and otherwise
// comes back when it will.
func (e *Expiration) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &v1.NodeClaim{}
	if err := e.client.Get(ctx, req.NamespacedName, nc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	at, ok := disruption.ExpiresAt(nc)
	if !ok || nc.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	now := e.clock.Now()
	if wait := at.Sub(now); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	log.FromContext(ctx).Info("nodeclaim expired", "nodeclaim", nc.Name, "expireAfter", nc.Spec.ExpireAfter.String())
	msg := fmt.Sprintf("expired: lived for its expireAfter (%s)", nc.Spec.ExpireAfter.String())
	return reconcile.Result{}, deleteForcefully(ctx, e.client, e.recorder, e.metrics, nc, v1.DisruptionReasonExpired, msg, time.Time{}, now)
}

// Register watches NodeClaims.
func (e *Expiration) Register(mgr manager.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("expiration").For(&v1.NodeClaim{}).Complete(e)
}
