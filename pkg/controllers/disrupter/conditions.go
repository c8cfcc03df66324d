package disrupter

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
)

// Conditions keeps each NodeClaim's Drifted and Consolidatable
// conditions (disruption.UpdateConditions), and relabels a node whose
// capacity reservation ended as on-demand first (seed 002), so that
// requirements drift sees it.
type Conditions struct {
	client  client.Client
	cloud   cloudprovider.CloudProvider
	applier *apply.Applier
	clock   clock.Clock
	drift   bool
	// nodeClasses are the NodeClass kinds watched.
	nodeClasses []schema.GroupVersionKind
}

// ConditionsDeps are what the conditions controller works with.
type ConditionsDeps struct {
	// Client reads NodeClaims, NodePools and Nodes.
	Client client.Client
	// Cloud judges drift and capacity reservations.
	Cloud   cloudprovider.CloudProvider
	Applier *apply.Applier
	Clock   clock.Clock
}

// ConditionsOptions configure the conditions controller.
type ConditionsOptions struct {
	// Drift is the Drift feature gate.
	Drift bool
	// NodeClasses are the cloud's NodeClass kinds
	// (GetSupportedNodeClasses): a change to one, its status included (a
	// new image, a subnet gone), judges its NodeClaims again at once
	// rather than at the next CloudDriftPoll.
	NodeClasses []schema.GroupVersionKind
}

// NewConditions builds the conditions controller.
func NewConditions(deps ConditionsDeps, opts ConditionsOptions) *Conditions {
	return &Conditions{client: deps.Client, cloud: deps.Cloud, applier: deps.Applier, clock: deps.Clock, drift: opts.Drift, nodeClasses: opts.NodeClasses}
}

// Reconcile judges one NodeClaim against its NodePool and the cloud.
func (c *Conditions) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &v1.NodeClaim{}
	if err := c.client.Get(ctx, req.NamespacedName, nc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if nc.DeletionTimestamp != nil || nc.Status.ProviderID == "" {
		return reconcile.Result{}, nil
	}
	np := &v1.NodePool{}
	if err := c.client.Get(ctx, client.ObjectKey{Name: nc.Labels[v1.NodePoolLabelKey]}, np); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if nc.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeReserved {
		released, err := c.releaseReservation(ctx, nc)
		if err != nil {
			return reconcile.Result{}, err
		}
		// Relabelled, it is judged (requirements drift) as on-demand; a
		// cache behind the patch brings it back through the watch.
		if released {
			if err := c.client.Get(ctx, req.NamespacedName, nc); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
		}
	}
	var cloudReason cloudprovider.DriftReason
	if c.drift {
		reason, err := c.cloud.IsDrifted(ctx, nc)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("asking the cloud whether nodeclaim %s drifted, %w", nc.Name, err)
		}
		cloudReason = reason
	}
	now := c.clock.Now()
	effs, at := disruption.Conditions(nc, np, string(cloudReason), c.drift, now)
	if _, err := c.applier.Apply(ctx, effs); err != nil {
		return reconcile.Result{}, fmt.Errorf("updating the disruption conditions of nodeclaim %s, %w", nc.Name, err)
	}
	wait := disruption.CloudDriftPoll
	if nc.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeReserved {
		wait = disruption.ReservationPoll
	}
	if !at.IsZero() {
		wait = min(wait, max(at.Sub(now), time.Millisecond))
	}
	return reconcile.Result{RequeueAfter: wait}, nil
}

// releaseReservation relabels nc and its Node on-demand when the cloud
// reports its instance out of the reservation it launched into
// (lifecycle.ReservationEnded); it reports whether it did.
func (c *Conditions) releaseReservation(ctx context.Context, nc *v1.NodeClaim) (bool, error) {
	instance, err := c.cloud.Get(ctx, nc.Status.ProviderID)
	if err != nil {
		return false, client.IgnoreNotFound(cloudprovider.IgnoreNodeClaimNotFound(err))
	}
	if !lifecycle.ReservationReleased(nc, instance) {
		return false, nil
	}
	var node *corev1.Node
	if nc.Status.NodeName != "" {
		node = &corev1.Node{}
		if err := c.client.Get(ctx, client.ObjectKey{Name: nc.Status.NodeName}, node); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return false, err
			}
			node = nil
		}
	}
	if _, err := c.applier.Apply(ctx, lifecycle.ReservationEnded(nc, node, instance, nil)); err != nil {
		return false, fmt.Errorf("relabelling nodeclaim %s on-demand, %w", nc.Name, err)
	}
	return true, nil
}

// Register watches NodeClaims, NodePools for the NodeClaims they own
// (a NodePool edit drifts them) and NodeClasses for the NodeClaims that
// name them.
func (c *Conditions) Register(_ context.Context, mgr manager.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("disruption-conditions").
		For(&v1.NodeClaim{}).
		Watches(&v1.NodePool{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			ncs := &v1.NodeClaimList{}
			if err := c.client.List(ctx, ncs, client.MatchingLabels{v1.NodePoolLabelKey: o.GetName()}); err != nil {
				return nil
			}
			out := make([]reconcile.Request, 0, len(ncs.Items))
			for i := range ncs.Items {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&ncs.Items[i])})
			}
			return out
		}))
	for _, gvk := range c.nodeClasses {
		o, err := mgr.GetScheme().New(gvk)
		if err != nil {
			return fmt.Errorf("watching nodeclass kind %s, %w", gvk, err)
		}
		obj, ok := o.(client.Object)
		if !ok {
			return fmt.Errorf("nodeclass kind %s is not an object", gvk)
		}
		b = b.Watches(obj, handler.EnqueueRequestsFromMapFunc(c.claimsOfNodeClass(gvk.GroupKind())))
	}
	return b.Complete(c)
}

// claimsOfNodeClass maps a NodeClass of kind gk to the NodeClaims whose
// nodeClassRef names it.
func (c *Conditions) claimsOfNodeClass(gk schema.GroupKind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		ncs := &v1.NodeClaimList{}
		if err := c.client.List(ctx, ncs); err != nil {
			return nil
		}
		var out []reconcile.Request
		for i := range ncs.Items {
			ref := ncs.Items[i].Spec.NodeClassRef
			if ref != nil && ref.Name == o.GetName() && ref.Group == gk.Group && ref.Kind == gk.Kind {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&ncs.Items[i])})
			}
		}
		return out
	}
}
