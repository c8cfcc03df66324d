package provisioner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Options tune the provisioner.
type Options struct {
	Window         scaleup.Window
	SchedulerNames []string
	// Plan tunes each provisioning decision.
	Plan scaleup.Options
}

// singleton is the one request the provisioner reconciles: it always
// solves for every pending pod at once.
func singleton() reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Name: "provisioner"}}
}

// Provisioner batches pending pods and launches NodeClaims for them.
type Provisioner struct {
	metrics *Metrics
	applier *apply.Applier
	client  client.Client
	cluster *clusterstate.Cluster
	clock   clock.Clock
	opts    Options

	mu    sync.Mutex
	batch scaleup.Batch
	// failed are NodeClaims whose launch failed, by the time they failed:
	// the informer cache may still show them for a moment, and pods must
	// not be planned onto them.
	failed map[string]time.Time
	// created are NodeClaims this provisioner created that the informer
	// cache may not show yet: a solve right after a create (an immediate
	// re-plan) must count them, or it plans their pods a second time.
	created map[string]*v1.NodeClaim
	trigger chan event.GenericEvent
	// nominations guards against launching again and again for a pod
	// whose planned node registered without fitting it.
	nominations scaleup.Nominations
}

// forgetFailedAfter bounds how long a failed NodeClaim is remembered; by
// then the cache has long seen its deletion.
const forgetFailedAfter = time.Minute

// Deps are what the provisioner works with.
type Deps struct {
	// Client creates NodeClaims.
	Client client.Client
	// Cluster gathers the cluster's state for each solve.
	Cluster  *clusterstate.Cluster
	Recorder events.EventRecorder
	Clock    clock.Clock
	// Metrics are the provisioner's (NewMetrics); nil records them where
	// nobody reads them.
	Metrics *Metrics
}

// New builds a provisioner.
func New(deps Deps, opts Options) *Provisioner {
	if deps.Metrics == nil {
		deps.Metrics = newMetrics()
	}
	counters := apply.NewCounters()
	deps.Metrics.Counters(counters)
	applier := apply.New(apply.Deps{Client: deps.Client, Recorder: deps.Recorder, Clock: deps.Clock, Counters: counters})
	return &Provisioner{client: deps.Client, applier: applier, cluster: deps.Cluster, clock: deps.Clock, metrics: deps.Metrics, opts: opts,
		failed: map[string]time.Time{}, created: map[string]*v1.NodeClaim{}, trigger: make(chan event.GenericEvent, 1)}
}

// LaunchFailed re-plans at once the pods of a NodeClaim deleted before
// it launched (its launch failed or timed out), ignoring the NodeClaim
// even if the cache still shows it. The provisioner's own NodeClaim watch
// calls it; the lifecycle only asks for a solve (effects.TriggerSolve).
func (p *Provisioner) LaunchFailed(name string) {
	p.mu.Lock()
	p.failed[name] = p.clock.Now()
	delete(p.created, name)
	p.mu.Unlock()
	p.Trigger(true)
}

// withoutFailed drops failed NodeClaims from the in-flight capacity.
func (p *Provisioner) withoutFailed(nodes []*provisioning.Node) []*provisioning.Node {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	for name, at := range p.failed {
		if now.Sub(at) > forgetFailedAfter {
			delete(p.failed, name)
		}
	}
	out := nodes[:0:0]
	for _, n := range nodes {
		if _, failed := p.failed[n.Name]; !failed || !n.InFlight {
			out = append(out, n)
		}
	}
	return out
}

// pruneCreated forgets the created NodeClaims the cache now shows (and,
// as a bound, those older than forgetFailedAfter). It runs before the
// snapshot lists the cache, so what it forgets is in the snapshot.
func (p *Provisioner) pruneCreated(ctx context.Context) error {
	p.mu.Lock()
	for name, nc := range p.created {
		if p.clock.Since(nc.CreationTimestamp.Time) > forgetFailedAfter {
			delete(p.created, name)
		}
	}
	names := slices.Collect(maps.Keys(p.created))
	p.mu.Unlock()
	for _, name := range names {
		err := p.client.Get(ctx, client.ObjectKey{Name: name}, &v1.NodeClaim{})
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("reading nodeclaim %s, %w", name, err)
		}
		if err == nil {
			p.mu.Lock()
			delete(p.created, name)
			p.mu.Unlock()
		}
	}
	return nil
}

// withCreated adds the created NodeClaims the snapshot lacks, as in-flight
// capacity.
func (p *Provisioner) withCreated(nodes []*provisioning.Node) []*provisioning.Node {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[string]bool{}
	for _, n := range nodes {
		seen[n.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(p.created)) {
		if !seen[name] {
			nodes = append(nodes, state.InFlightNode(p.created[name]))
		}
	}
	return nodes
}

// Trigger asks for a solve: after the batch windows, or at once (a launch
// failed and its pods must find other capacity now, not a window later).
func (p *Provisioner) Trigger(immediate bool) {
	p.mu.Lock()
	p.batch.Trigger(p.clock.Now(), immediate)
	p.mu.Unlock()
	select {
	case p.trigger <- event.GenericEvent{Object: &corev1.Pod{}}:
	default:
	}
}

// Reconcile solves once the batch is due.
func (p *Provisioner) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	p.mu.Lock()
	due, wait := p.batch.Due(p.opts.Window, p.clock.Now())
	p.mu.Unlock()
	if !due {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	d, err := p.provision(ctx)
	if err != nil {
		// Pods are still pending: try again after another batch.
		p.Trigger(false)
		return reconcile.Result{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	p.batch.Solved(d, p.opts.Window, now)
	if next, ok := p.batch.Next(p.opts.Window, now); ok && next.After(now) {
		return reconcile.Result{RequeueAfter: next.Sub(now)}, nil
	}
	return reconcile.Result{}, nil
}

// provision solves once and applies the decision.
func (p *Provisioner) provision(ctx context.Context) (scaleup.Decision, error) {
	if err := p.pruneCreated(ctx); err != nil {
		return scaleup.Decision{}, err
	}
	snapshot, err := p.cluster.Snapshot(ctx)
	if err != nil {
		return scaleup.Decision{}, fmt.Errorf("snapshotting the cluster, %w", err)
	}
	for _, err := range snapshot.PodGroupErrors {
		log.FromContext(ctx).Error(err, "reading a gang's min count; its members count all of them")
	}
	snapshot.Input.Nodes = p.withCreated(p.withoutFailed(snapshot.Input.Nodes))
	start := p.clock.Now()
	opts := p.opts.Plan
	opts.Nominations = &p.nominations
	opts.Models = p.cluster.OpenModels(ctx, snapshot.Input.Pods)
	d := scaleup.Decide(snapshot, opts, func(np string) string { return np + "-" + rand.String(5) })
	p.metrics.pendingPods.Set(float64(d.Pending))
	p.metrics.unplacedPods.Reset()
	if d.Pending > 0 || d.Virtual.Count > 0 {
		p.metrics.schedulingDuration.Observe(p.clock.Since(start).Seconds())
		for _, u := range d.Result.Unplaced {
			p.metrics.unplacedPods.WithLabelValues(string(u.Reason)).Inc()
		}
		log.FromContext(ctx).Info("solved", "pods", d.Pending, "virtualPods", d.Virtual.Count, "nodeclaims", len(d.Result.NewNodeClaims),
			"nominations", len(d.Result.Nominations), "unplaced", len(d.Result.Unplaced), "virtualUnplaced", len(d.Virtual.Unplaced),
			"duration", p.clock.Since(start).String())
	}
	if _, err := p.applier.Apply(ctx, d.Effects()); err != nil {
		return d, err
	}
	// The NodeClaims created count as in-flight capacity until the cache
	// shows them. (After an error none are: the retry comes a batch
	// window later, when the cache shows those that were.)
	p.mu.Lock()
	for _, nc := range d.NodeClaims {
		created := nc.DeepCopy()
		// The applier created a copy; this one has no creation time yet,
		// which pruneCreated bounds its memory by.
		if created.CreationTimestamp.IsZero() {
			created.CreationTimestamp = metav1.NewTime(p.clock.Now())
		}
		p.created[nc.Name] = created
	}
	p.mu.Unlock()
	return d, nil
}

// Register watches pending pods, deleting nodes (whose pods must go
// elsewhere) and NodeClaims deleted before they launched, and adds the
// provisioner to the manager.
func (p *Provisioner) Register(_ context.Context, mgr manager.Manager) error {
	toSingleton := func(context.Context, client.Object) []reconcile.Request { return []reconcile.Request{singleton()} }
	return ctrl.NewControllerManagedBy(mgr).
		Named("provisioner").
		WatchesRawSource(source.Channel(p.trigger, handler.EnqueueRequestsFromMapFunc(toSingleton))).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			if pod, ok := o.(*corev1.Pod); ok && state.IsProvisionable(pod, p.opts.SchedulerNames) {
				p.Trigger(false)
			}
			return nil
		})).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			if o.GetDeletionTimestamp() != nil {
				p.Trigger(false)
			}
			return nil
		})).
		Watches(&v1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if nc, ok := o.(*v1.NodeClaim); ok && nc.DeletionTimestamp != nil && nc.Status.ProviderID == "" {
				p.LaunchFailed(nc.Name)
			}
			return nil
		})).
		Watches(&v1.NodePool{}, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			p.Trigger(false)
			return nil
		})).
		Complete(p)
}
