package disrupter

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/disruption"
)

// CapacityBlocks drains the nodes of capacity blocks before the cloud
// reclaims them (disruption.CapacityBlockDrains decides; this applies):
// each is deleted forcefully with the reclaim as its drain deadline.
type CapacityBlocks struct {
	client  client.Client
	source  cloudprovider.CapacityBlockSource
	applier *apply.Applier
	clock   clock.Clock
	trigger chan event.GenericEvent
}

// CapacityBlocksDeps are what the capacity-block controller works with.
type CapacityBlocksDeps struct {
	// Client lists NodeClaims.
	Client client.Client
	// Source lists the cloud's capacity blocks.
	Source  cloudprovider.CapacityBlockSource
	Applier *apply.Applier
	Clock   clock.Clock
}

// NewCapacityBlocks builds the capacity-block controller; it has no
// settings.
func NewCapacityBlocks(deps CapacityBlocksDeps) *CapacityBlocks {
	return &CapacityBlocks{client: deps.Client, source: deps.Source, applier: deps.Applier, clock: deps.Clock, trigger: make(chan event.GenericEvent, 1)}
}

// Reconcile asks the cloud for its capacity blocks, decides and applies;
// it looks again every disruption.ReservationPoll (a block may be bought
// or extended), or sooner when a drain is due.
func (r *CapacityBlocks) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	blocks, err := r.source.CapacityBlocks(ctx)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("reading capacity blocks, %w", err)
	}
	ncs := &v1.NodeClaimList{}
	if err := r.client.List(ctx, ncs); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing nodeclaims, %w", err)
	}
	claims := make([]*v1.NodeClaim, len(ncs.Items))
	for i := range ncs.Items {
		claims[i] = &ncs.Items[i]
	}
	now := r.clock.Now()
	drains, wake := disruption.CapacityBlockDrains(claims, blocks, now)
	if _, err := r.applier.Apply(ctx, disruption.DrainBlocks(drains, now)); err != nil {
		return reconcile.Result{}, fmt.Errorf("draining capacity blocks, %w", err)
	}
	wait := disruption.ReservationPoll
	if !wake.IsZero() {
		wait = min(wait, max(wake.Sub(now), time.Millisecond))
	}
	return reconcile.Result{RequeueAfter: wait}, nil
}

// Register adds the controller; it polls from start (RequeueAfter).
func (r *CapacityBlocks) Register(_ context.Context, mgr manager.Manager) error {
	return registerPolling(mgr, "capacityblocks", r.trigger, r)
}
