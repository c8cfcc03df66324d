package nodeclaim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/controllers/index"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/state"
)

// PodEvents keeps each NodeClaim's status.lastPodEventTime: when a pod
// last bound to or left its node. consolidateAfter counts from it.
type PodEvents struct {
	client  client.Client
	applier *apply.Applier
	clock   clock.Clock
}

// PodEventsDeps are what PodEvents works with.
type PodEventsDeps struct {
	// Client lists NodeClaims by node name (the manager's cached client).
	Client  client.Client
	Applier *apply.Applier
	Clock   clock.Clock
}

// NewPodEvents builds the controller; it has no settings.
func NewPodEvents(deps PodEventsDeps) *PodEvents {
	return &PodEvents{client: deps.Client, applier: deps.Applier, clock: deps.Clock}
}

// Reconcile stamps the NodeClaim of the node a pod event touched; the
// request names the node.
func (p *PodEvents) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ncs := &v1.NodeClaimList{}
	if err := p.client.List(ctx, ncs, client.MatchingFields{index.NodeName: req.Name}); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing nodeclaims of node %s, %w", req.Name, err)
	}
	now := p.clock.Now()
	var effs []effects.Effect
	for i := range ncs.Items {
		effs = append(effs, lifecycle.PodEvent(&ncs.Items[i], now)...)
	}
	if _, err := p.applier.Apply(ctx, effs); err != nil {
		return reconcile.Result{}, fmt.Errorf("stamping the nodeclaims of node %s, %w", req.Name, err)
	}
	return reconcile.Result{}, nil
}

// Register watches pods binding to or leaving nodes; call index.Register
// first.
func (p *PodEvents) Register(_ context.Context, mgr manager.Manager) error {
	toNode := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if name := o.(*corev1.Pod).Spec.NodeName; name != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
		}
		return nil
	})
	changed := predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldPod, newPod := e.ObjectOld.(*corev1.Pod), e.ObjectNew.(*corev1.Pod)
			return oldPod.Spec.NodeName != newPod.Spec.NodeName || state.IsTerminal(oldPod) != state.IsTerminal(newPod)
		},
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("nodeclaim.podevents").
		Watches(&corev1.Pod{}, toNode, builder.WithPredicates(changed)).
		Complete(p)
}
