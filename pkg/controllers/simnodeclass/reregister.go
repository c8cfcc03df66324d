package simnodeclass

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Reregisterer is the simulated cloud's Reregister.
type Reregisterer interface {
	Reregister(ctx context.Context, nodeClaim *v1.NodeClaim) error
}

// Reregistration runs once when the controller becomes leader: the
// simulated kubelet of every launched NodeClaim whose Node has not
// registered registers it again. The registration of a Node is in flight
// in the process that launched its instance, so a controller that died in
// that window (a crash, a leader handover) would otherwise leave the
// instance running with no Node until the registration timeout.
type Reregistration struct {
	reader client.Reader
	cloud  Reregisterer
}

// ReregistrationDeps are what the runnable works with.
type ReregistrationDeps struct {
	// Reader lists NodeClaims past the cache (the manager's API reader).
	Reader client.Reader
	// Cloud registers a NodeClaim's Node again.
	Cloud Reregisterer
}

// NewReregistration builds the runnable; it has no options.
func NewReregistration(deps ReregistrationDeps) *Reregistration {
	return &Reregistration{reader: deps.Reader, cloud: deps.Cloud}
}

// Start implements manager.Runnable.
func (r *Reregistration) Start(ctx context.Context) error {
	ncs := &v1.NodeClaimList{}
	if err := r.reader.List(ctx, ncs); err != nil {
		return fmt.Errorf("listing nodeclaims to register their nodes again, %w", err)
	}
	var errs []error
	for i := range ncs.Items {
		nc := &ncs.Items[i]
		if nc.DeletionTimestamp != nil || nc.Status.ProviderID == "" || nc.Status.NodeName != "" ||
			!meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeLaunched) {
			continue
		}
		log.FromContext(ctx).Info("registering node again", "nodeclaim", nc.Name, "providerID", nc.Status.ProviderID)
		if err := r.cloud.Reregister(ctx, nc); err != nil {
			errs = append(errs, fmt.Errorf("registering the node of nodeclaim %s again, %w", nc.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Register adds the runnable to the manager (it runs on the leader).
func (r *Reregistration) Register(_ context.Context, mgr manager.Manager) error {
	return mgr.Add(r)
}
