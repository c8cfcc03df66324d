package provisioner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	metrics  *Metrics
	client   client.Client
	cluster  *clusterstate.Cluster
	recorder events.EventRecorder
	clock    clock.Clock
	opts     Options

	mu          sync.Mutex
	first, last time.Time
	immediate   bool
	// recheck is set while pods were left waiting (unplaced, or nominated
	// to capacity not up yet): they are solved again after the maximum
	// window even if nothing changes, so no pod waits on a lost event.
	recheck bool
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

// New builds a provisioner.
func New(c client.Client, cluster *clusterstate.Cluster, recorder events.EventRecorder, clk clock.Clock, metrics *Metrics, opts Options) *Provisioner {
	return &Provisioner{client: c, cluster: cluster, recorder: recorder, clock: clk, metrics: metrics, opts: opts,
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
	now := p.clock.Now()
	if p.first.IsZero() {
		p.first = now
	}
	p.last = now
	p.immediate = p.immediate || immediate
	p.mu.Unlock()
	select {
	case p.trigger <- event.GenericEvent{Object: &corev1.Pod{}}:
	default:
	}
}

// Reconcile solves once the batch is due.
func (p *Provisioner) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	p.mu.Lock()
	if p.first.IsZero() && p.recheck {
		p.first, p.last, p.recheck = p.clock.Now().Add(-p.opts.Window.Idle), p.clock.Now().Add(-p.opts.Window.Idle), false
	}
	due, wait := p.opts.Window.Decide(p.first, p.last, p.clock.Now())
	if p.immediate && !p.first.IsZero() {
		due = true
	}
	if !due {
		p.mu.Unlock()
		if wait > 0 {
			return reconcile.Result{RequeueAfter: wait}, nil
		}
		return reconcile.Result{}, nil
	}
	p.first, p.last, p.immediate = time.Time{}, time.Time{}, false
	p.mu.Unlock()
	waiting, err := p.provision(ctx)
	if err != nil {
		// Pods are still pending: try again after another batch.
		p.Trigger(false)
		return reconcile.Result{}, err
	}
	if waiting {
		p.mu.Lock()
		p.recheck = true
		p.mu.Unlock()
		return reconcile.Result{RequeueAfter: p.opts.Window.Max}, nil
	}
	return reconcile.Result{}, nil
}

// provision solves once; waiting reports pods left unplaced or nominated
// to capacity that is not up yet.
func (p *Provisioner) provision(ctx context.Context) (waiting bool, err error) {
	if err := p.pruneCreated(ctx); err != nil {
		return false, err
	}
	snapshot, err := p.cluster.Snapshot(ctx)
	if err != nil {
		return false, fmt.Errorf("snapshotting the cluster, %w", err)
	}
	snapshot.Input.Nodes = p.withCreated(p.withoutFailed(snapshot.Input.Nodes))
	start := p.clock.Now()
	opts := p.opts.Plan
	opts.Nominations = &p.nominations
	d := scaleup.Decide(ctx, snapshot, opts, func(np string) string { return np + "-" + rand.String(5) })
	for _, f := range d.FlavorFailures {
		p.recorder.Eventf(f.Pod, nil, corev1.EventTypeWarning, f.Reason, "Provision", "%s", f.Err.Error())
	}
	p.metrics.pendingPods.Set(float64(d.Pending))
	p.metrics.unplacedPods.Reset()
	if d.Pending == 0 {
		return false, nil
	}
	result := d.Result
	p.metrics.schedulingDuration.Observe(p.clock.Since(start).Seconds())
	for _, u := range result.Unplaced {
		p.metrics.unplacedPods.WithLabelValues(string(u.Reason)).Inc()
	}
	log.FromContext(ctx).Info("solved", "pods", d.Pending, "nodeclaims", len(result.NewNodeClaims),
		"nominations", len(result.Nominations), "unplaced", len(result.Unplaced), "duration", p.clock.Since(start).String())
	for i, c := range result.NewNodeClaims {
		nc := d.NodeClaims[i]
		if err := p.client.Create(ctx, nc); err != nil {
			return false, fmt.Errorf("creating nodeclaim for nodepool %s, %w", c.NodePool, err)
		}
		p.mu.Lock()
		p.created[nc.Name] = nc.DeepCopy()
		p.mu.Unlock()
		capacityType := "any"
		if ct := c.Requirements.Get(v1.CapacityTypeLabelKey); ct.Len() == 1 {
			capacityType = ct.Any()
		}
		p.metrics.nodeClaimsCreated.WithLabelValues(c.NodePool, capacityType).Inc()
		for _, pod := range c.Pods {
			p.recorder.Eventf(pod, nc, corev1.EventTypeNormal, "Nominated", "Provision", "pod should schedule on nodeclaim %s", nc.Name)
		}
	}
	for _, n := range result.Nominations {
		p.recorder.Eventf(n.Pod, nil, corev1.EventTypeNormal, "Nominated", "Provision", "pod should schedule on node %s", n.NodeName)
	}
	for _, u := range result.Unplaced {
		p.recorder.Eventf(u.Pod, nil, corev1.EventTypeWarning, string(u.Reason), "Provision", "%s", u.Message)
	}
	return len(result.Unplaced) > 0 || len(result.Nominations) > 0, nil
}

// Register watches pending pods, deleting nodes (whose pods must go
// elsewhere) and NodeClaims deleted before they launched, and adds the
// provisioner to the manager.
func (p *Provisioner) Register(mgr manager.Manager) error {
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
