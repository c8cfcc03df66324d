package disruption

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// Options tune the controller.
type Options struct {
	// PollInterval is how often disruption is evaluated with no command
	// in flight (the reference polls every 10 s).
	PollInterval time.Duration
	// ValidationDelay and ReplacementTimeout mean what they do in
	// disruption.Options.
	ValidationDelay    time.Duration
	ReplacementTimeout time.Duration
	// Gates are the feature gates that shape the methods.
	Gates disruption.Gates
	// Unavailable is the provisioner's unavailable-offerings cache: how
	// long an offering has been available decides when a fallback node
	// returns to it.
	Unavailable *cloudprovider.UnavailableOfferings
	// Models finds llmaz OpenModels, so running model-serving pods keep
	// to their flavors (scaleup.PinFlavors); nil when there are none.
	Models scaleup.ModelLookup
}

// replacingPoll is how often a command waiting on its replacements looks
// at them.
const replacingPoll = time.Second

// Controller runs the disruption engine against the API server.
type Controller struct {
	client client.Client
	// reader reads replacements past the cache: one just created must not
	// look failed because the cache has not seen it yet.
	reader   client.Reader
	cluster  *clusterstate.Cluster
	recorder events.EventRecorder
	clock    clock.Clock
	metrics  *Metrics
	opts     Options
	engine   *disruption.Engine
	trigger  chan event.GenericEvent
}

// New builds the controller.
func New(c client.Client, reader client.Reader, cluster *clusterstate.Cluster, recorder events.EventRecorder, clk clock.Clock, metrics *Metrics, opts Options) *Controller {
	engine := disruption.NewEngine(disruption.Options{
		Methods: disruption.Methods(opts.Gates), ValidationDelay: opts.ValidationDelay, ReplacementTimeout: opts.ReplacementTimeout,
		Name: func(np string) string { return np + "-" + rand.String(5) }, HistoryFromFirstTick: true,
	})
	return &Controller{client: c, reader: reader, cluster: cluster, recorder: recorder, clock: clk, metrics: metrics, opts: opts,
		engine: engine, trigger: make(chan event.GenericEvent, 1)}
}

// Reconcile observes the cluster, ticks the engine and applies what it
// decided.
func (c *Controller) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	objs, snapshot, err := c.cluster.SnapshotWithObjects(ctx)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("snapshotting the cluster, %w", err)
	}
	in := disruption.NewInput(objs, snapshot)
	in.Pods = scaleup.PinFlavors(ctx, in.Pods, c.opts.Models)
	if c.opts.Unavailable != nil {
		in.Unavailable = c.opts.Unavailable.History()
	}
	replacements, err := c.observe(ctx, c.engine.Replacements())
	if err != nil {
		return reconcile.Result{}, err
	}
	start := c.clock.Now()
	tick, err := c.engine.Tick(in, replacements, start)
	if tick.Planned != nil {
		c.metrics.evaluation.Observe(c.clock.Since(start).Seconds())
		c.record(in, tick.Planned)
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("evaluating disruption, %w", err)
	}
	if err := c.apply(ctx, in, tick); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: c.next(tick)}, nil
}

// next is when to evaluate again: soon while a command is in flight, the
// poll interval otherwise.
func (c *Controller) next(tick disruption.Tick) time.Duration {
	wait := c.opts.PollInterval
	if o, ok := c.engine.Active(); ok && o.Phase == disruption.PhaseReplacing {
		wait = replacingPoll
	}
	if !tick.WakeAt.IsZero() {
		wait = min(wait, max(tick.WakeAt.Sub(c.clock.Now()), time.Millisecond))
	}
	return wait
}

// observe reads each replacement past the cache.
func (c *Controller) observe(ctx context.Context, names []string) (map[string]disruption.ReplacementStatus, error) {
	out := map[string]disruption.ReplacementStatus{}
	for _, name := range names {
		nc := &v1.NodeClaim{}
		if err := c.reader.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("reading replacement nodeclaim %s, %w", name, err)
			}
			continue
		}
		switch {
		case nc.DeletionTimestamp != nil:
		case meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeInitialized):
			out[name] = disruption.ReplacementInitialized
		default:
			out[name] = disruption.ReplacementLaunching
		}
	}
	return out, nil
}

// record reports a planning round: eligible nodes and budgets, the
// series reset so deleted NodePools and methods that did not run drop out.
func (c *Controller) record(in disruption.Input, d *disruption.Decision) {
	c.metrics.eligible.Reset()
	for method, n := range d.Eligible {
		c.metrics.eligible.WithLabelValues(method).Set(float64(n))
	}
	c.metrics.allowed.Reset()
	for _, reason := range []v1.DisruptionReason{v1.DisruptionReasonEmpty, v1.DisruptionReasonDrifted, v1.DisruptionReasonUnderutilized} {
		for pool, n := range disruption.AllowedByPool(in, reason, c.clock.Now()) {
			c.metrics.allowed.WithLabelValues(pool, string(reason)).Set(float64(n))
		}
	}
}

// apply carries a tick out: stale taints off, verdicts reported, the
// command's actions applied, its end recorded.
func (c *Controller) apply(ctx context.Context, in disruption.Input, tick disruption.Tick) error {
	for _, n := range tick.Stale {
		log.FromContext(ctx).Info("removing stale disruption taint", "node", n.Name)
		if err := c.untaint(ctx, n.Name); err != nil {
			return err
		}
		// The reason recorded for the lost command goes with its taint.
		for _, nc := range in.NodeClaims {
			if nc.Status.NodeName == n.Name {
				if err := c.setReason(ctx, nc.Name, nil); err != nil {
					return err
				}
			}
		}
	}
	for _, v := range tick.Verdicts {
		// Fresh verdicts only (the engine rate-limits them): a pod whose
		// preferences hold a node, for one, is named in the log too.
		log.FromContext(ctx).Info("node not disrupted", "nodeclaim", v.NodeClaim, "method", v.Method, "why", v.Message)
		for _, obj := range objectsOf(in, v.NodeClaim, v.Node) {
			// The method is the action: the events API merges events of
			// one object, reason and action into a series whatever their
			// messages, so Emptiness's verdict must not hide under
			// consolidation's.
			c.recorder.Eventf(obj, nil, corev1.EventTypeNormal, v.Event, v.Method, "%s", v.Message)
		}
	}
	if tick.Started != nil {
		log.FromContext(ctx).Info("disruption decided", "method", tick.Started.Method, "reason", tick.Started.Reason,
			"nodeclaims", tick.Started.Names(), "replacements", len(tick.Started.Replacements))
	}
	var cmd disruption.Command
	if o, ok := c.engine.Active(); ok {
		cmd = o.Command
	}
	if tick.Finished != nil {
		cmd = *tick.Finished
	}
	for _, a := range tick.Actions {
		if err := c.act(ctx, cmd, a); err != nil {
			return err
		}
	}
	for name, annotations := range tick.Annotate {
		if err := c.annotate(ctx, name, annotations); err != nil {
			return err
		}
	}
	if tick.Finished != nil && tick.Abandoned != "" {
		log.FromContext(ctx).Info("disruption abandoned", "method", cmd.Method, "nodeclaims", cmd.Names(), "why", tick.Abandoned)
		for _, cand := range cmd.Candidates {
			c.recorder.Eventf(cand.NodeClaim, nil, corev1.EventTypeNormal, disruption.EventDisruptionBlocked, "Abandon", "%s abandoned: %s", cmd.Method, tick.Abandoned)
		}
	}
	return nil
}

// act applies one action.
func (c *Controller) act(ctx context.Context, cmd disruption.Command, a disruption.Action) error {
	why := fmt.Sprintf("%s (%s)", cmd.Method, cmd.Reason)
	switch a.Kind {
	case disruption.ActionTaint:
		for _, cand := range a.Candidates {
			if err := c.taint(ctx, cand, cmd); err != nil {
				return err
			}
		}
	case disruption.ActionUntaint:
		for _, cand := range a.Candidates {
			if err := c.untaint(ctx, cand.Node.Name); err != nil {
				return err
			}
			if err := c.setReason(ctx, cand.NodeClaim.Name, nil); err != nil {
				return err
			}
		}
	case disruption.ActionLaunch:
		for _, nc := range a.NodeClaims {
			if err := c.client.Create(ctx, nc); err != nil {
				return fmt.Errorf("creating replacement nodeclaim %s, %w", nc.Name, err)
			}
			for _, cand := range cmd.Candidates {
				// Related to the replacement, so two replacements are two
				// events, not one series.
				c.recorder.Eventf(cand.NodeClaim, nc, corev1.EventTypeNormal, "DisruptionLaunching", cmd.Method, "%s: launching replacement nodeclaim %s", why, nc.Name)
				c.recorder.Eventf(cand.Node, nc, corev1.EventTypeNormal, "DisruptionLaunching", cmd.Method, "%s: launching replacement nodeclaim %s", why, nc.Name)
			}
		}
	case disruption.ActionDelete:
		for _, cand := range a.Candidates {
			if err := client.IgnoreNotFound(c.client.Delete(ctx, cand.NodeClaim.DeepCopy())); err != nil {
				return fmt.Errorf("deleting nodeclaim %s, %w", cand.NodeClaim.Name, err)
			}
			c.recorder.Eventf(cand.NodeClaim, nil, corev1.EventTypeNormal, "DisruptionTerminating", cmd.Method, "%s: deleting the node", why)
			c.recorder.Eventf(cand.Node, nil, corev1.EventTypeNormal, "DisruptionTerminating", cmd.Method, "%s: deleting the node", why)
		}
		c.metrics.decisions.WithLabelValues(cmd.Method, string(cmd.Reason)).Inc()
		c.metrics.disrupted.WithLabelValues(string(cmd.Reason)).Add(float64(len(a.Candidates)))
		log.FromContext(ctx).Info("disrupting", "method", cmd.Method, "reason", cmd.Reason, "nodeclaims", cmd.Names())
	}
	return nil
}

// taint marks a candidate's node karpenter.sh/disrupted:NoSchedule and
// records on its NodeClaim why it is being disrupted.
func (c *Controller) taint(ctx context.Context, cand disruption.Candidate, cmd disruption.Command) error {
	node := &corev1.Node{}
	if err := c.client.Get(ctx, client.ObjectKey{Name: cand.Node.Name}, node); err != nil {
		return fmt.Errorf("reading node %s, %w", cand.Node.Name, err)
	}
	taint := v1.DisruptedNoScheduleTaint()
	if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) }) {
		patch := client.MergeFromWithOptions(node.DeepCopy(), client.MergeFromWithOptimisticLock{})
		node.Spec.Taints = append(node.Spec.Taints, taint)
		if err := c.client.Patch(ctx, node, patch); err != nil {
			return fmt.Errorf("tainting node %s, %w", node.Name, err)
		}
	}
	return c.setReason(ctx, cand.NodeClaim.Name, &metav1.Condition{Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue,
		Reason: string(cmd.Reason), Message: cmd.Method, LastTransitionTime: metav1.NewTime(c.clock.Now())})
}

func (c *Controller) untaint(ctx context.Context, name string) error {
	node := &corev1.Node{}
	if err := c.client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return client.IgnoreNotFound(err)
	}
	taint := v1.DisruptedNoScheduleTaint()
	kept := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool { return t.MatchTaint(&taint) })
	if len(kept) == len(node.Spec.Taints) {
		return nil
	}
	patch := client.MergeFromWithOptions(node.DeepCopy(), client.MergeFromWithOptimisticLock{})
	node.Spec.Taints = kept
	if err := c.client.Patch(ctx, node, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("un-tainting node %s, %w", name, err))
	}
	return nil
}

// setReason sets (cond) or removes (nil) a NodeClaim's DisruptionReason
// condition.
func (c *Controller) setReason(ctx context.Context, name string, cond *metav1.Condition) error {
	nc := &v1.NodeClaim{}
	if err := c.client.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
		return client.IgnoreNotFound(err)
	}
	patch := client.MergeFromWithOptions(nc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	changed := false
	if cond != nil {
		changed = meta.SetStatusCondition(&nc.Status.Conditions, *cond)
	} else {
		changed = meta.RemoveStatusCondition(&nc.Status.Conditions, v1.ConditionTypeDisruptionReason)
	}
	if !changed {
		return nil
	}
	if err := c.client.Status().Patch(ctx, nc, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("recording the disruption reason of nodeclaim %s, %w", name, err))
	}
	return nil
}

// annotate merges annotations into NodeClaim name's (a failed return to
// preferred capacity backing off).
func (c *Controller) annotate(ctx context.Context, name string, annotations map[string]string) error {
	nc := &v1.NodeClaim{}
	if err := c.client.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
		return client.IgnoreNotFound(err)
	}
	patch := client.MergeFrom(nc.DeepCopy())
	if nc.Annotations == nil {
		nc.Annotations = map[string]string{}
	}
	maps.Copy(nc.Annotations, annotations)
	if err := c.client.Patch(ctx, nc, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("annotating nodeclaim %s, %w", name, err))
	}
	log.FromContext(ctx).Info("return to preferred capacity backs off", "nodeclaim", name, "attempts", annotations[v1.ReturnAttemptsAnnotationKey],
		"notBefore", annotations[v1.ReturnNotBeforeAnnotationKey])
	return nil
}

// objectsOf are a verdict's NodeClaim and Node, as events regard them.
func objectsOf(in disruption.Input, nodeClaim, node string) []runtime.Object {
	var out []runtime.Object
	for _, nc := range in.NodeClaims {
		if nc.Name == nodeClaim {
			out = append(out, nc)
		}
	}
	for _, n := range in.Nodes {
		if n.Name == node {
			out = append(out, n)
		}
	}
	return out
}

// Register adds the controller to the manager; it evaluates once at
// start, then on its own schedule (RequeueAfter).
func (c *Controller) Register(mgr manager.Manager) error {
	return registerPolling(mgr, "disruption", c.trigger, c)
}

// registerPolling adds a controller that reconciles one request, name,
// once at start and then on the schedule its RequeueAfter sets: the
// trigger channel (buffered, one) holds the first event.
func registerPolling(mgr manager.Manager, name string, trigger chan event.GenericEvent, r reconcile.Reconciler) error {
	trigger <- event.GenericEvent{Object: &corev1.Node{}}
	toSingleton := func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WatchesRawSource(source.Channel(trigger, handler.EnqueueRequestsFromMapFunc(toSingleton))).
		Complete(r)
}
