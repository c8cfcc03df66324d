package termination

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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
	"github.com/capstan-dev/capstan/pkg/controllers/index"
	"github.com/capstan-dev/capstan/pkg/drain"
)

// podNodeField indexes pods by the node they run on.
const podNodeField = "spec.nodeName"

// Controller terminates deleted NodeClaims and their Nodes.
type Controller struct {
	client   client.Client
	cloud    cloudprovider.CloudProvider
	recorder events.EventRecorder
	clock    clock.Clock

	slack prometheus.Observer

	mu sync.Mutex
	// refused counts evictions a PDB refused in a row, per NodeClaim, for
	// backing off.
	refused map[string]int
	// drained are the NodeClaims whose drain finished, so the deadline's
	// slack is observed once.
	drained map[string]bool
}

// NewSlackMetric registers capstan_interruption_deadline_slack_seconds:
// how much time an interrupted node's deadline had left when its last pod
// was gone (negative: the drain was late).
func NewSlackMetric(reg prometheus.Registerer) (prometheus.Observer, error) {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "capstan_interruption_deadline_slack_seconds",
		Help:    "Time left before an interrupted instance's deadline when its node finished draining (negative when late).",
		Buckets: []float64{-30, -10, 0, 5, 10, 20, 30, 60, 90, 120, 300, 600},
	})
	if err := reg.Register(h); err != nil {
		return nil, err
	}
	return h, nil
}

// New builds the termination controller; slack observes interrupted
// nodes' deadline slack (NewSlackMetric).
func New(c client.Client, cloud cloudprovider.CloudProvider, recorder events.EventRecorder, clk clock.Clock, slack prometheus.Observer) *Controller {
	return &Controller{client: c, cloud: cloud, recorder: recorder, clock: clk, slack: slack, refused: map[string]int{}, drained: map[string]bool{}}
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
	node, err := c.nodeOf(ctx, nc)
	if err != nil {
		return reconcile.Result{}, err
	}
	if node != nil {
		if res, done, err := c.drain(ctx, nc, node); err != nil || !done {
			return res, err
		}
	}
	if nc.Status.ProviderID != "" {
		err := c.cloud.Delete(ctx, nc)
		if err == nil {
			// Termination started; ask again until the instance is gone.
			return reconcile.Result{RequeueAfter: time.Second}, nil
		}
		if !cloudprovider.IsNodeClaimNotFoundError(err) {
			return reconcile.Result{}, fmt.Errorf("terminating the instance of nodeclaim %s, %w", nc.Name, err)
		}
	}
	if node != nil {
		if err := c.release(ctx, node); err != nil {
			return reconcile.Result{}, err
		}
	}
	c.mu.Lock()
	delete(c.refused, nc.Name)
	delete(c.drained, nc.Name)
	c.mu.Unlock()
	c.recorder.Eventf(nc, nil, corev1.EventTypeNormal, "Terminated", "Terminate", "instance %s terminated", nc.Status.ProviderID)
	patch := client.MergeFrom(nc.DeepCopy())
	controllerutil.RemoveFinalizer(nc, v1.TerminationFinalizer)
	return reconcile.Result{}, client.IgnoreNotFound(c.client.Patch(ctx, nc, patch))
}

// drain taints, deletes and empties the node and waits for its volumes;
// done when the instance may go.
func (c *Controller) drain(ctx context.Context, nc *v1.NodeClaim, node *corev1.Node) (reconcile.Result, bool, error) {
	if err := c.taint(ctx, node); err != nil {
		return reconcile.Result{}, false, err
	}
	if node.DeletionTimestamp == nil {
		if err := client.IgnoreNotFound(c.client.Delete(ctx, node)); err != nil {
			return reconcile.Result{}, false, fmt.Errorf("deleting node %s, %w", node.Name, err)
		}
	}
	pods := &corev1.PodList{}
	if err := c.client.List(ctx, pods, client.MatchingFields{podNodeField: node.Name}); err != nil {
		return reconcile.Result{}, false, fmt.Errorf("listing pods of node %s, %w", node.Name, err)
	}
	podPtrs := make([]*corev1.Pod, len(pods.Items))
	for i := range pods.Items {
		podPtrs[i] = &pods.Items[i]
	}
	plan := drain.PlanDrain(podPtrs, c.clock.Now(), drain.Deadline(nc))
	if !plan.Drained {
		refused, err := c.execute(ctx, plan)
		if err != nil {
			return reconcile.Result{}, false, err
		}
		return reconcile.Result{RequeueAfter: c.backoff(nc.Name, refused, plan.RequeueAfter)}, false, nil
	}
	c.observeSlack(nc)
	vas := &storagev1.VolumeAttachmentList{}
	if err := c.client.List(ctx, vas); err != nil {
		return reconcile.Result{}, false, fmt.Errorf("listing volume attachments, %w", err)
	}
	for _, va := range vas.Items {
		if va.Spec.NodeName == node.Name {
			c.recorder.Eventf(nc, nil, corev1.EventTypeNormal, "WaitingOnVolumeAttachments", "Terminate", "volume attachment %s still on node %s", va.Name, node.Name)
			return reconcile.Result{RequeueAfter: time.Second}, false, nil
		}
	}
	return reconcile.Result{}, true, nil
}

// observeSlack records, once per NodeClaim, how long before its
// interruption deadline an interrupted node finished draining.
func (c *Controller) observeSlack(nc *v1.NodeClaim) {
	reason := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason)
	deadline, ok := drain.TerminationTimestamp(nc)
	if !ok || reason == nil || reason.Reason != string(v1.DisruptionReasonInterrupted) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drained[nc.Name] {
		return
	}
	c.drained[nc.Name] = true
	c.slack.Observe(deadline.Sub(c.clock.Now()).Seconds())
}

// execute evicts and deletes; refused counts evictions a PDB refused.
func (c *Controller) execute(ctx context.Context, plan drain.Plan) (int, error) {
	refused := 0
	for _, p := range plan.Evict {
		eviction := &policyv1.Eviction{}
		eviction.Name, eviction.Namespace = p.Name, p.Namespace
		err := c.client.SubResource("eviction").Create(ctx, p, eviction)
		switch {
		// A namespace being deleted refuses evictions; its pods are
		// going anyway.
		case err == nil, apierrors.IsNotFound(err), apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		case apierrors.IsTooManyRequests(err):
			refused++
		default:
			return refused, fmt.Errorf("evicting pod %s/%s, %w", p.Namespace, p.Name, err)
		}
	}
	for _, d := range plan.Delete {
		if err := client.IgnoreNotFound(c.client.Delete(ctx, d.Pod, client.GracePeriodSeconds(d.GracePeriod))); err != nil {
			return refused, fmt.Errorf("deleting pod %s/%s, %w", d.Pod.Namespace, d.Pod.Name, err)
		}
		c.recorder.Eventf(d.Pod, nil, corev1.EventTypeWarning, "TerminationGracePeriodReached", "Delete", "deleted so its grace period ends with the node's terminationGracePeriod")
	}
	return refused, nil
}

// backoff: pods still leaving are polled every second; evictions PDBs
// refuse are retried at growing intervals (up to 15 s); an early deletion
// coming due sooner wins.
func (c *Controller) backoff(name string, refused int, due time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	wait := time.Second
	if refused > 0 {
		c.refused[name]++
		wait = min(time.Duration(1<<min(c.refused[name], 4))*time.Second, 15*time.Second)
	} else {
		delete(c.refused, name)
	}
	if due > 0 && due < wait {
		wait = due
	}
	return wait
}

func (c *Controller) taint(ctx context.Context, node *corev1.Node) error {
	taint := v1.DisruptedNoScheduleTaint()
	for _, t := range node.Spec.Taints {
		if t.MatchTaint(&taint) {
			return nil
		}
	}
	patch := client.MergeFrom(node.DeepCopy())
	node.Spec.Taints = append(node.Spec.Taints, taint)
	if err := c.client.Patch(ctx, node, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("tainting node %s, %w", node.Name, err))
	}
	return nil
}

// release drops the Node's finalizer so the API server can delete it.
func (c *Controller) release(ctx context.Context, node *corev1.Node) error {
	if !controllerutil.ContainsFinalizer(node, v1.TerminationFinalizer) {
		return nil
	}
	patch := client.MergeFrom(node.DeepCopy())
	controllerutil.RemoveFinalizer(node, v1.TerminationFinalizer)
	if err := client.IgnoreNotFound(c.client.Patch(ctx, node, patch)); err != nil {
		return fmt.Errorf("releasing node %s, %w", node.Name, err)
	}
	return nil
}

func (c *Controller) nodeOf(ctx context.Context, nc *v1.NodeClaim) (*corev1.Node, error) {
	if nc.Status.ProviderID == "" {
		return nil, nil
	}
	nodes := &corev1.NodeList{}
	if err := c.client.List(ctx, nodes, client.MatchingFields{index.ProviderID: nc.Status.ProviderID}); err != nil {
		return nil, fmt.Errorf("listing the node of nodeclaim %s, %w", nc.Name, err)
	}
	if len(nodes.Items) == 0 {
		return nil, nil
	}
	return &nodes.Items[0], nil
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
	if len(ncs.Items) == 0 {
		if err := c.release(ctx, node); err != nil {
			log.FromContext(ctx).Error(err, "releasing node without nodeclaim", "node", node.Name)
		}
		return nil
	}
	var out []reconcile.Request
	for i := range ncs.Items {
		nc := &ncs.Items[i]
		if nc.DeletionTimestamp == nil {
			if err := client.IgnoreNotFound(c.client.Delete(ctx, nc)); err != nil {
				log.FromContext(ctx).Error(err, "deleting nodeclaim of deleted node", "node", node.Name)
			}
		}
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(nc)})
	}
	return out
}

// Register indexes pods by node and watches NodeClaims and Nodes; call
// index.Register first.
func (c *Controller) Register(ctx context.Context, mgr manager.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, podNodeField, func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		return fmt.Errorf("indexing pods by node, %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("termination").
		For(&v1.NodeClaim{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return c.nodeDeleted(ctx, o.(*corev1.Node))
		})).
		Complete(c)
}
