package disrupter

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/interruption"
)

// DefaultInterruptionPoll is how often the cloud's notices are read: a
// 30-second notice leaves little to lose.
const DefaultInterruptionPoll = 2 * time.Second

// InterruptionOptions tune the interruption controller.
type InterruptionOptions struct {
	// Poll is DefaultInterruptionPoll when zero.
	Poll time.Duration
	// PreemptibleMargin is how long before a preemptible VM's 24-hour
	// limit it is replaced within budgets (interruption.Options).
	PreemptibleMargin time.Duration
}

// Interruption acts on the cloud's interruption notices
// (interruption.Handler decides; this applies).
type Interruption struct {
	client  client.Client
	source  cloudprovider.InterruptionSource
	ack     cloudprovider.InterruptionAcknowledger
	applier *apply.Applier
	clock   clock.Clock
	poll    time.Duration
	handler *interruption.Handler
	trigger chan event.GenericEvent
}

// InterruptionDeps are what the interruption controller works with.
type InterruptionDeps struct {
	// Client lists NodeClaims.
	Client client.Client
	// Source reads the cloud's interruption notices.
	Source cloudprovider.InterruptionSource
	// Ack, when the source keeps notices (cloudprovider.AsInterruptionAcknowledger),
	// is told which notices were acted on for good; nil otherwise.
	Ack cloudprovider.InterruptionAcknowledger
	// Applier marks offerings in its unavailable-offerings cache.
	Applier *apply.Applier
	Clock   clock.Clock
}

// NewInterruption builds the interruption controller.
func NewInterruption(deps InterruptionDeps, opts InterruptionOptions) *Interruption {
	poll := opts.Poll
	if poll <= 0 {
		poll = DefaultInterruptionPoll
	}
	return &Interruption{client: deps.Client, source: deps.Source, ack: deps.Ack, applier: deps.Applier, clock: deps.Clock, poll: poll,
		handler: &interruption.Handler{Options: interruption.Options{PreemptibleMargin: opts.PreemptibleMargin}}, trigger: make(chan event.GenericEvent, 1)}
}

// Reconcile reads the notices, decides and applies.
func (r *Interruption) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	notices, err := r.source.Interruptions(ctx)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("reading interruption notices, %w", err)
	}
	claims, err := r.claims(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	now := r.clock.Now()
	d := r.handler.Step(notices, claims, now)
	for _, a := range d.Actions {
		if a.Received {
			n := a.Notice
			log.FromContext(ctx).Info("interruption notice", "kind", n.Kind, "nodeclaim", a.NodeClaim, "deadline", n.Deadline, "message", n.Message)
		}
	}
	if _, err := r.applier.Apply(ctx, d.Effects); err != nil {
		return reconcile.Result{}, fmt.Errorf("acting on interruption notices, %w", err)
	}
	if r.ack != nil && len(d.Done) > 0 {
		if err := r.ack.Acknowledge(ctx, d.Done); err != nil {
			return reconcile.Result{}, fmt.Errorf("acknowledging interruption notices, %w", err)
		}
	}
	wait := r.poll
	if !d.WakeAt.IsZero() {
		wait = min(wait, max(d.WakeAt.Sub(now), time.Millisecond))
	}
	return reconcile.Result{RequeueAfter: wait}, nil
}

func (r *Interruption) claims(ctx context.Context) (map[string]interruption.Claim, error) {
	ncs := &v1.NodeClaimList{}
	if err := r.client.List(ctx, ncs); err != nil {
		return nil, fmt.Errorf("listing nodeclaims, %w", err)
	}
	pools := &v1.NodePoolList{}
	if err := r.client.List(ctx, pools); err != nil {
		return nil, fmt.Errorf("listing nodepools, %w", err)
	}
	byName := map[string]*v1.NodePool{}
	for i := range pools.Items {
		byName[pools.Items[i].Name] = &pools.Items[i]
	}
	out := map[string]interruption.Claim{}
	for i := range ncs.Items {
		nc := &ncs.Items[i]
		if nc.Status.ProviderID != "" {
			out[nc.Status.ProviderID] = interruption.Claim{NodeClaim: nc, NodePool: byName[nc.Labels[v1.NodePoolLabelKey]]}
		}
	}
	return out, nil
}

// Register adds the controller; it polls from start (RequeueAfter).
func (r *Interruption) Register(_ context.Context, mgr manager.Manager) error {
	return registerPolling(mgr, "interruption", r.trigger, r)
}
