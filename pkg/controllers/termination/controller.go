package termination

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/controllers/index"
	"github.com/capstan-dev/capstan/pkg/drain"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// Controller terminates deleted NodeClaims and their Nodes: it gathers,
// calls the termination step (pkg/drain: Drain, then Finish) and applies
// the effects.
type Controller struct {
	client client.Client
	cloud  cloudprovider.CloudProvider
	clock  clock.Clock

	applier *apply.Applier

	mu sync.Mutex
	// progress is each terminating NodeClaim's drain.Progress.
	progress map[string]drain.Progress
}

// NewSlackMetric registers drain.SlackMetric: how much time an
// interrupted node's deadline had left when its last pod was gone
// (negative: the drain was late).
func NewSlackMetric(reg prometheus.Registerer) (prometheus.Observer, error) {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    drain.SlackMetric,
		Help:    "Time left before an interrupted instance's deadline when its node finished draining (negative when late).",
		Buckets: []float64{-30, -10, 0, 5, 10, 20, 30, 60, 90, 120, 300, 600},
	})
	if err := reg.Register(h); err != nil {
		return nil, err
	}
	return h, nil
}

// Deps are what the termination controller works with.
type Deps struct {
	// Client reads and patches NodeClaims, Nodes and pods.
	Client client.Client
	// Cloud terminates the instances.
	Cloud    cloudprovider.CloudProvider
	Recorder events.EventRecorder
	Clock    clock.Clock
	// Slack observes interrupted nodes' deadline slack (NewSlackMetric);
	// nil observes nothing.
	Slack prometheus.Observer
}

// New builds the termination controller; it has no settings.
func New(deps Deps) *Controller {
	counters := apply.NewCounters()
	if deps.Slack != nil {
		counters.AddHistogram(drain.SlackMetric, deps.Slack)
	}
	applier := apply.New(apply.Deps{Client: deps.Client, Recorder: deps.Recorder, Cloud: deps.Cloud, Counters: counters, Clock: deps.Clock})
	return &Controller{client: deps.Client, cloud: deps.Cloud, clock: deps.Clock, applier: applier, progress: map[string]drain.Progress{}}
}

// apply carries out a step; it looks again at the earliest of the
// step's requeues and its poll. Evictions a disruption budget refused
// are the step's to notice (drain.Progress), not an error.
func (c *Controller) apply(ctx context.Context, step drain.Step) (reconcile.Result, error) {
	requeue, err := c.applier.Apply(ctx, step.Effects)
	if err != nil && !errors.As(err, new(*effects.RefusedEvictions)) {
		return reconcile.Result{}, err
	}
	if step.Poll > 0 && (requeue == 0 || step.Poll < requeue) {
		requeue = step.Poll
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// Reconcile drives a deleted NodeClaim to the end: drain, detach,
// terminate, release.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &v1.NodeClaim{}
	if err := c.client.Get(ctx, req.NamespacedName, nc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if nc.DeletionTimestamp == nil || !controllerutil.ContainsFinalizer(nc, v1.TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("nodeclaim", nc.Name))
	in, err := c.gather(ctx, nc)
	if err != nil {
		return reconcile.Result{}, err
	}
	step := drain.Drain(in)
	if step.Drained {
		gone, err := cloudprovider.InstanceGone(ctx, c.cloud, nc)
		if err != nil {
			return reconcile.Result{}, err
		}
		finish := drain.Finish(nc, in.Node, gone)
		step.Effects, step.Poll, step.Done = append(step.Effects, finish.Effects...), finish.Poll, finish.Done
	}
	res, err := c.apply(ctx, step)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err != nil:
	case step.Done:
		delete(c.progress, nc.Name)
	default:
		c.progress[nc.Name] = step.Progress
	}
	return res, err
}

// gather reads what the step needs: the NodeClaim's Node, its pods and
// the volumes still attached to it.
func (c *Controller) gather(ctx context.Context, nc *v1.NodeClaim) (drain.Termination, error) {
	c.mu.Lock()
	in := drain.Termination{NodeClaim: nc, Progress: c.progress[nc.Name], Now: c.clock.Now()}
	c.mu.Unlock()
	node, err := index.NodeOf(ctx, c.client, nc)
	if err != nil || node == nil {
		return in, err
	}
	in.Node = node
	pods := &corev1.PodList{}
	if err := c.client.List(ctx, pods, client.MatchingFields{index.PodNode: node.Name}); err != nil {
		return in, fmt.Errorf("listing pods of node %s, %w", node.Name, err)
	}
	for i := range pods.Items {
		in.Pods = append(in.Pods, &pods.Items[i])
	}
	vas := &storagev1.VolumeAttachmentList{}
	if err := c.client.List(ctx, vas); err != nil {
		return in, fmt.Errorf("listing volume attachments, %w", err)
	}
	for _, va := range vas.Items {
		if va.Spec.NodeName == node.Name {
			in.Attachments = append(in.Attachments, va.Name)
		}
	}
	return in, nil
}

// nodeDeleted cascades a Node's deletion to its NodeClaim, or releases the
// Node when its NodeClaim is gone (it vanished while draining, or never
// existed).
func (c *Controller) nodeDeleted(ctx context.Context, node *corev1.Node) []reconcile.Request {
	if node.DeletionTimestamp == nil || !controllerutil.ContainsFinalizer(node, v1.TerminationFinalizer) {
		return nil
	}
	ncs := &v1.NodeClaimList{}
	if err := c.client.List(ctx, ncs, client.MatchingFields{index.ProviderID: node.Spec.ProviderID}); err != nil {
		return nil
	}
	claims := make([]*v1.NodeClaim, len(ncs.Items))
	var out []reconcile.Request
	for i := range ncs.Items {
		claims[i] = &ncs.Items[i]
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(claims[i])})
	}
	if _, err := c.apply(ctx, drain.Step{Effects: drain.NodeDeleted(node, claims)}); err != nil {
		log.FromContext(ctx).Error(err, "cascading node deletion", "node", node.Name)
	}
	return out
}

// Register watches NodeClaims and Nodes; call index.Register first.
func (c *Controller) Register(ctx context.Context, mgr manager.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("termination").
		For(&v1.NodeClaim{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return c.nodeDeleted(ctx, o.(*corev1.Node))
		})).
		Complete(c)
}
