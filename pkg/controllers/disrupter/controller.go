package disrupter

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
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
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
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
	// RepairPolicies are the cloud provider's: the node conditions Repair
	// replaces nodes for, with the NodeRepair gate.
	RepairPolicies []cloudprovider.RepairPolicy
	// Unavailable is the provisioner's unavailable-offerings cache: how
	// long an offering has been available decides when a fallback node
	// returns to it.
	Unavailable *cloudprovider.UnavailableOfferings
	// Policies are the solver's, as the provisioner's.
	Policies disruption.Policies
}

// replacingPoll is how often a command waiting on its replacements looks
// at them.
const replacingPoll = time.Second

// Controller runs the disruption engine against the API server.
type Controller struct {
	// reader reads replacements past the cache: one just created must not
	// look failed because the cache has not seen it yet.
	reader  client.Reader
	cluster *clusterstate.Cluster
	applier *apply.Applier
	clock   clock.Clock
	metrics *Metrics
	opts    Options
	engine  *disruption.Engine
	trigger chan event.GenericEvent
}

// Deps are what the disruption controller works with.
type Deps struct {
	// Reader reads replacements past the cache (the manager's API reader).
	Reader client.Reader
	// Cluster gathers the cluster's state for each tick.
	Cluster *clusterstate.Cluster
	// Applier applies what the engine decides.
	Applier *apply.Applier
	Clock   clock.Clock
	// Metrics are the controller's (NewMetrics).
	Metrics *Metrics
}

// New builds the controller.
func New(deps Deps, opts Options) *Controller {
	engine := disruption.NewEngine(disruption.Options{
		Methods: disruption.WithRepair(disruption.Methods(opts.Gates), opts.Gates, opts.RepairPolicies), ValidationDelay: opts.ValidationDelay, ReplacementTimeout: opts.ReplacementTimeout,
		Name: func(np string) string { return np + "-" + rand.String(5) }, HistoryFromFirstTick: true,
	})
	return &Controller{reader: deps.Reader, cluster: deps.Cluster, applier: deps.Applier, clock: deps.Clock, metrics: deps.Metrics, opts: opts,
		engine: engine, trigger: make(chan event.GenericEvent, 1)}
}

// Reconcile observes the cluster, ticks the engine and applies what it
// decided.
func (c *Controller) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	objs, snapshot, err := c.cluster.SnapshotWithObjects(ctx)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("snapshotting the cluster, %w", err)
	}
	in := disruption.NewInput(objs, snapshot, c.opts.Policies)
	// Running model-serving pods keep to their flavors.
	in.Pods, in.Snapshot.Input.TermRequests = scaleup.PinFlavors(in.Pods, c.cluster.OpenModels(ctx, in.Pods))
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
		c.record(in, tick.Planned, tick.Started)
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("evaluating disruption, %w", err)
	}
	if err := c.apply(ctx, tick); err != nil {
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
			nc = nil
		}
		out[name] = disruption.ReplacementStatusOf(nc)
	}
	return out, nil
}

// record reports a planning round: eligible nodes and budgets, the
// series reset so deleted NodePools and methods that did not run drop
// out, and the moves Balanced NodePools scored (started: the command the
// round started, if any).
func (c *Controller) record(in disruption.Input, d *disruption.Decision, started *disruption.Command) {
	c.metrics.recordScores(d.Scores, started)
	c.metrics.eligible.Reset()
	for method, n := range d.Eligible {
		c.metrics.eligible.WithLabelValues(method).Set(float64(n))
	}
	c.metrics.allowed.Reset()
	for _, reason := range disruption.BudgetReasons(c.engine.Options.Methods) {
		for pool, n := range disruption.AllowedByPool(in, reason, c.clock.Now()) {
			c.metrics.allowed.WithLabelValues(pool, string(reason)).Set(float64(n))
		}
	}
}

// apply hands the tick's effects to the applier and logs what it
// decided.
func (c *Controller) apply(ctx context.Context, tick disruption.Tick) error {
	logger := log.FromContext(ctx)
	for _, n := range tick.Stale {
		logger.Info("removing stale disruption taint", "node", n.Name)
	}
	for _, v := range tick.Verdicts {
		// Fresh verdicts only (the engine rate-limits them): a pod whose
		// preferences hold a node, for one, is named in the log too.
		logger.Info("node not disrupted", "nodeclaim", v.NodeClaim, "method", v.Method, "code", v.Code, "why", v.Message)
	}
	if tick.Started != nil {
		logger.Info("disruption decided", "method", tick.Started.Method, "reason", tick.Started.Reason,
			"nodeclaims", tick.Started.Names(), "replacements", len(tick.Started.Replacements))
	}
	if _, err := c.applier.Apply(ctx, tick.Effects); err != nil {
		return fmt.Errorf("applying disruption, %w", err)
	}
	if f := tick.Finished; f != nil && tick.Abandoned == "" {
		logger.Info("disrupting", "method", f.Method, "reason", f.Reason, "nodeclaims", f.Names())
	}
	for name, annotations := range tick.Annotate {
		logger.Info("return to preferred capacity backs off", "nodeclaim", name, "attempts", annotations[v1.ReturnAttemptsAnnotationKey],
			"notBefore", annotations[v1.ReturnNotBeforeAnnotationKey])
	}
	if tick.Finished != nil && tick.Abandoned != "" {
		logger.Info("disruption abandoned", "method", tick.Finished.Method, "nodeclaims", tick.Finished.Names(), "why", tick.Abandoned)
	}
	return nil
}

// Register adds the controller to the manager; it evaluates once at
// start, then on its own schedule (RequeueAfter).
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
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
