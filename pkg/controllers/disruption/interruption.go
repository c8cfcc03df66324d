package disruption

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
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
	client      client.Client
	source      cloudprovider.InterruptionSource
	unavailable *cloudprovider.UnavailableOfferings
	recorder    events.EventRecorder
	clock       clock.Clock
	metrics     *Metrics
	poll        time.Duration
	handler     *interruption.Handler
	trigger     chan event.GenericEvent
}

// NewInterruption builds the interruption controller over src.
func NewInterruption(c client.Client, src cloudprovider.InterruptionSource, unavailable *cloudprovider.UnavailableOfferings,
	recorder events.EventRecorder, clk clock.Clock, metrics *Metrics, opts InterruptionOptions) *Interruption {
	poll := opts.Poll
	if poll <= 0 {
		poll = DefaultInterruptionPoll
	}
	return &Interruption{client: c, source: src, unavailable: unavailable, recorder: recorder, clock: clk, metrics: metrics, poll: poll,
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
		if err := r.act(ctx, a, claims[a.Notice.ProviderID].NodeClaim, now); err != nil {
			return reconcile.Result{}, err
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

// act applies one action: count, mark, expect or interrupt, then report.
func (r *Interruption) act(ctx context.Context, a interruption.Action, nc *v1.NodeClaim, now time.Time) error {
	n := a.Notice
	if a.Received {
		r.metrics.received.WithLabelValues(string(n.Kind)).Inc()
		log.FromContext(ctx).Info("interruption notice", "kind", n.Kind, "nodeclaim", a.NodeClaim, "deadline", n.Deadline, "message", n.Message)
	}
	if a.MarkUnavailable {
		r.unavailable.MarkUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: n.InstanceType, Zone: n.Zone}, string(n.Kind))
	}
	if a.Expect {
		patch := client.MergeFrom(nc.DeepCopy())
		meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeInterruptionExpected, Status: metav1.ConditionTrue,
			Reason: string(n.Kind), Message: n.Message, LastTransitionTime: metav1.NewTime(now)})
		if err := r.client.Status().Patch(ctx, nc, patch); err != nil {
			return client.IgnoreNotFound(fmt.Errorf("marking nodeclaim %s's interruption expected, %w", nc.Name, err))
		}
	}
	if a.Interrupt {
		msg := fmt.Sprintf("interrupted (%s)", n.Kind)
		if err := deleteForcefully(ctx, r.client, r.recorder, r.metrics, nc, v1.DisruptionReasonInterrupted, msg, n.Deadline, now); err != nil {
			return err
		}
	}
	if a.Event != "" {
		for _, obj := range r.reported(ctx, nc, a.Node) {
			r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, string(n.Kind), "Interrupt", "%s", a.Event)
		}
	}
	return nil
}

// reported are the objects a notice's event goes on: the Node, and the
// NodeClaim.
func (r *Interruption) reported(ctx context.Context, nc *v1.NodeClaim, node string) []runtime.Object {
	out := []runtime.Object{nc}
	if node == "" {
		return out
	}
	n := &corev1.Node{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: node}, n); err == nil {
		out = append(out, n)
	}
	return out
}

// Register adds the controller; it polls from start (RequeueAfter).
func (r *Interruption) Register(mgr manager.Manager) error {
	return registerPolling(mgr, "interruption", r.trigger, r)
}
