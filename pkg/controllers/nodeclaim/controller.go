package nodeclaim

import (
	"context"
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/capstan-dev/capstan/pkg/lifecycle"
)

// Provisioner is what the lifecycle re-runs after a failed launch.
type Provisioner interface {
	// LaunchFailed re-plans the failed NodeClaim's pods at once.
	LaunchFailed(nodeClaim string)
}

// Controller runs NodeClaims' lifecycle.
type Controller struct {
	client client.Client
	// reader reads past the informer cache: a launch must see whether the
	// NodeClaim already launched, or a stale cache launches it twice.
	reader      client.Reader
	cloud       cloudprovider.CloudProvider
	unavailable *cloudprovider.UnavailableOfferings
	provisioner Provisioner
	recorder    events.EventRecorder
	clock       clock.Clock
	timeouts    lifecycle.Timeouts
	// attempts are the failed launches of NodeClaims not launched yet, by
	// name: the backoff lifecycle.Next waits out between launches. Kept
	// here rather than left to the work queue's rate limiter so that the
	// reconcile a Launched=False update triggers waits too, and the
	// simulator, which has no work queue, retries at the same times.
	attemptsMu sync.Mutex
	attempts   map[string]lifecycle.LaunchAttempts
	// afterCreate, when set, runs between a successful cloud Create and
	// the status update that records it: the crash-injection point tests
	// use to prove a crash there leaks nothing garbage collection misses.
	afterCreate func(nodeClaim string)
}

// WithAfterCreate installs a test-only hook at the crash-injection point.
func (c *Controller) WithAfterCreate(hook func(nodeClaim string)) *Controller {
	c.afterCreate = hook
	return c
}

// New builds the lifecycle controller.
func New(c client.Client, reader client.Reader, cloud cloudprovider.CloudProvider, unavailable *cloudprovider.UnavailableOfferings, p Provisioner, recorder events.EventRecorder, clk clock.Clock, timeouts lifecycle.Timeouts) *Controller {
	return &Controller{client: c, reader: reader, cloud: cloud, unavailable: unavailable, provisioner: p, recorder: recorder, clock: clk, timeouts: timeouts,
		attempts: map[string]lifecycle.LaunchAttempts{}}
}

// Reconcile gathers the NodeClaim and its Node, asks Next what to do and
// does it.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &v1.NodeClaim{}
	if err := c.client.Get(ctx, req.NamespacedName, nc); err != nil {
		if errors.IsNotFound(err) {
			c.forget(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("nodeclaim", nc.Name))
	node, err := c.nodeFor(ctx, nc)
	if err != nil {
		return reconcile.Result{}, err
	}
	if nc.DeletionTimestamp != nil {
		c.forget(nc.Name)
		return reconcile.Result{}, nil // the termination controller's
	}
	if !controllerutil.ContainsFinalizer(nc, v1.TerminationFinalizer) {
		patch := client.MergeFrom(nc.DeepCopy())
		controllerutil.AddFinalizer(nc, v1.TerminationFinalizer)
		if err := c.client.Patch(ctx, nc, patch); err != nil {
			return reconcile.Result{}, fmt.Errorf("adding finalizer to nodeclaim %s, %w", nc.Name, err)
		}
	}
	action, wait := lifecycle.Next(nc, node, c.clock.Now(), c.timeouts, c.attemptsOf(nc.Name))
	switch action {
	case lifecycle.Launch:
		return c.launch(ctx, nc)
	case lifecycle.LaunchTimeout:
		return c.launchFailed(ctx, nc, lifecycle.OnLaunchTimeout(nc, c.timeouts.Launch))
	case lifecycle.Register:
		return reconcile.Result{}, c.register(ctx, nc, node)
	case lifecycle.Initialize:
		return reconcile.Result{}, c.initialize(ctx, nc, node)
	case lifecycle.Expire:
		c.recorder.Eventf(nc, nil, corev1.EventTypeWarning, "RegistrationTimeout", "Delete", "no node registered within %s of launch", c.timeouts.Registration)
		return reconcile.Result{}, client.IgnoreNotFound(c.client.Delete(ctx, nc))
	case lifecycle.Wait:
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	return reconcile.Result{}, nil
}

func (c *Controller) attemptsOf(name string) lifecycle.LaunchAttempts {
	c.attemptsMu.Lock()
	defer c.attemptsMu.Unlock()
	return c.attempts[name]
}

func (c *Controller) setAttempts(name string, a lifecycle.LaunchAttempts) {
	c.attemptsMu.Lock()
	defer c.attemptsMu.Unlock()
	c.attempts[name] = a
}

func (c *Controller) forget(name string) {
	c.attemptsMu.Lock()
	defer c.attemptsMu.Unlock()
	delete(c.attempts, name)
}

// launch creates the instance. A failed launch goes as
// lifecycle.OnLaunchError says: insufficient capacity deletes the
// NodeClaim and re-plans its pods; anything else sets Launched=False and
// is retried after lifecycle.LaunchBackoff (RequeueAfter; the returned
// error is nil so the work queue's own rate limiter does not add its
// backoff), until the launch timeout.
func (c *Controller) launch(ctx context.Context, nc *v1.NodeClaim) (reconcile.Result, error) {
	latest := &v1.NodeClaim{}
	if err := c.reader.Get(ctx, client.ObjectKeyFromObject(nc), latest); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("reading nodeclaim %s before launch, %w", nc.Name, err))
	}
	if latest.Status.ProviderID != "" || latest.DeletionTimestamp != nil {
		return reconcile.Result{}, nil // launched already (the cache lags) or going away
	}
	created, err := c.cloud.Create(ctx, nc)
	if err != nil {
		return c.launchFailed(ctx, nc, lifecycle.OnLaunchError(err, c.attemptsOf(nc.Name), c.clock.Now()))
	}
	c.forget(nc.Name)
	if c.afterCreate != nil {
		c.afterCreate(nc.Name)
	}
	patch := client.MergeFrom(nc.DeepCopy())
	if nc.Labels == nil {
		nc.Labels = map[string]string{}
	}
	maps.Copy(nc.Labels, created.Labels)
	if len(created.Annotations) > 0 && nc.Annotations == nil {
		nc.Annotations = map[string]string{}
	}
	// The cloud's annotations (the sim's NodeClass hash) show what the
	// instance was launched with.
	maps.Copy(nc.Annotations, created.Annotations)
	if err := c.client.Patch(ctx, nc, patch); err != nil {
		return reconcile.Result{}, fmt.Errorf("labelling and annotating nodeclaim %s, %w", nc.Name, err)
	}
	status := client.MergeFrom(nc.DeepCopy())
	nc.Status.ProviderID = created.Status.ProviderID
	nc.Status.ImageID = created.Status.ImageID
	nc.Status.Capacity = created.Status.Capacity
	nc.Status.Allocatable = created.Status.Allocatable
	c.setCondition(nc, v1.ConditionTypeLaunched, metav1.ConditionTrue, "Launched", "instance "+created.Status.ProviderID)
	c.setReady(nc)
	if err := c.client.Status().Patch(ctx, nc, status); err != nil {
		return reconcile.Result{}, fmt.Errorf("recording launch of nodeclaim %s, %w", nc.Name, err)
	}
	c.recorder.Eventf(nc, nil, corev1.EventTypeNormal, "Launched", "Launch", "launched %s (%s, %s)", nc.Labels[v1.LabelInstanceType], nc.Labels[v1.CapacityTypeLabelKey], nc.Labels[v1.LabelZone])
	return reconcile.Result{}, nil
}

// launchFailed applies what the lifecycle decided after a failed or
// timed-out launch: the marks, the events, then the NodeClaim deleted
// (its pods planned again at once) or kept with Launched=False until its
// next attempt.
func (c *Controller) launchFailed(ctx context.Context, nc *v1.NodeClaim, failure lifecycle.LaunchFailure) (reconcile.Result, error) {
	marked := 0
	if c.unavailable != nil {
		marked = c.unavailable.Mark(failure.Unavailable)
	}
	for _, e := range failure.Events {
		c.recorder.Eventf(nc, nil, e.Type, e.Reason, "Launch", "%s", e.Message)
	}
	if failure.Delete {
		log.FromContext(ctx).Info("deleting nodeclaim not launched; its pods are planned again", "reason", failure.Reason, "message", failure.Message, "marks", marked)
		if err := client.IgnoreNotFound(c.client.Delete(ctx, nc)); err != nil {
			return reconcile.Result{}, fmt.Errorf("deleting nodeclaim %s after %s, %w", nc.Name, failure.Reason, err)
		}
		c.forget(nc.Name)
		c.provisioner.LaunchFailed(nc.Name)
		return reconcile.Result{}, nil
	}
	c.setAttempts(nc.Name, failure.Attempts)
	log.FromContext(ctx).Error(nil, "launch failed; retrying", "reason", failure.Reason, "message", failure.Message, "failures", failure.Attempts.Failures, "marks", marked)
	status := client.MergeFrom(nc.DeepCopy())
	c.setCondition(nc, v1.ConditionTypeLaunched, metav1.ConditionFalse, failure.Reason, failure.Message)
	c.setReady(nc)
	if err := c.client.Status().Patch(ctx, nc, status); err != nil {
		return reconcile.Result{}, fmt.Errorf("recording failed launch of nodeclaim %s, %w", nc.Name, err)
	}
	_, wait := lifecycle.Next(nc, nil, c.clock.Now(), c.timeouts, failure.Attempts)
	return reconcile.Result{RequeueAfter: wait}, nil
}

func (c *Controller) register(ctx context.Context, nc *v1.NodeClaim, node *corev1.Node) error {
	if synced, changed := lifecycle.SyncNode(nc, node); changed {
		if err := c.client.Patch(ctx, synced, client.MergeFrom(node)); err != nil {
			return fmt.Errorf("registering node %s, %w", node.Name, err)
		}
	}
	status := client.MergeFrom(nc.DeepCopy())
	nc.Status.NodeName = node.Name
	c.setCondition(nc, v1.ConditionTypeRegistered, metav1.ConditionTrue, "Registered", "node "+node.Name)
	c.setReady(nc)
	if err := c.client.Status().Patch(ctx, nc, status); err != nil {
		return fmt.Errorf("recording registration of nodeclaim %s, %w", nc.Name, err)
	}
	c.recorder.Eventf(nc, nil, corev1.EventTypeNormal, "Registered", "Register", "node %s registered", node.Name)
	return nil
}

func (c *Controller) initialize(ctx context.Context, nc *v1.NodeClaim, node *corev1.Node) error {
	if node.Labels[v1.NodeInitializedLabelKey] != "true" {
		patch := client.MergeFrom(node.DeepCopy())
		node.Labels[v1.NodeInitializedLabelKey] = "true"
		if err := c.client.Patch(ctx, node, patch); err != nil {
			return fmt.Errorf("labelling node %s initialized, %w", node.Name, err)
		}
	}
	status := client.MergeFrom(nc.DeepCopy())
	c.setCondition(nc, v1.ConditionTypeInitialized, metav1.ConditionTrue, "Initialized", "node is ready")
	c.setReady(nc)
	if err := c.client.Status().Patch(ctx, nc, status); err != nil {
		return fmt.Errorf("recording initialization of nodeclaim %s, %w", nc.Name, err)
	}
	return nil
}

func (c *Controller) setCondition(nc *v1.NodeClaim, t string, s metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{
		Type: t, Status: s, Reason: reason, Message: message,
		ObservedGeneration: nc.Generation, LastTransitionTime: metav1.NewTime(c.clock.Now()),
	})
}

func (c *Controller) setReady(nc *v1.NodeClaim) {
	for _, t := range []string{v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized} {
		if !meta.IsStatusConditionTrue(nc.Status.Conditions, t) {
			c.setCondition(nc, v1.ConditionTypeReady, metav1.ConditionFalse, "Not"+t, t+" is not yet true")
			return
		}
	}
	c.setCondition(nc, v1.ConditionTypeReady, metav1.ConditionTrue, "Ready", "")
}

// nodeFor finds the Node whose providerID is the NodeClaim's.
func (c *Controller) nodeFor(ctx context.Context, nc *v1.NodeClaim) (*corev1.Node, error) {
	if nc.Status.ProviderID == "" {
		return nil, nil
	}
	nodes := &corev1.NodeList{}
	if err := c.client.List(ctx, nodes, client.MatchingFields{ProviderIDField: nc.Status.ProviderID}); err != nil {
		return nil, fmt.Errorf("listing nodes of nodeclaim %s, %w", nc.Name, err)
	}
	if len(nodes.Items) == 0 {
		return nil, nil
	}
	return &nodes.Items[0], nil
}

// ProviderIDField indexes Nodes and NodeClaims by provider id.
const ProviderIDField = "spec.providerID"

// IndexProviderID indexes Nodes and NodeClaims by provider id, which the
// lifecycle and termination controllers look each other up by.
func IndexProviderID(ctx context.Context, mgr manager.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Node{}, ProviderIDField, func(o client.Object) []string {
		return []string{o.(*corev1.Node).Spec.ProviderID}
	}); err != nil {
		return fmt.Errorf("indexing nodes by providerID, %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1.NodeClaim{}, ProviderIDField, func(o client.Object) []string {
		return []string{o.(*v1.NodeClaim).Status.ProviderID}
	}); err != nil {
		return fmt.Errorf("indexing nodeclaims by providerID, %w", err)
	}
	return nil
}

// Register watches NodeClaims and the Nodes that belong to them; call
// IndexProviderID first.
func (c *Controller) Register(mgr manager.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("nodeclaim.lifecycle").
		For(&v1.NodeClaim{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			ncs := &v1.NodeClaimList{}
			if err := c.client.List(ctx, ncs, client.MatchingFields{ProviderIDField: o.(*corev1.Node).Spec.ProviderID}); err != nil {
				return nil
			}
			var out []reconcile.Request
			for _, nc := range ncs.Items {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&nc)})
			}
			return out
		})).
		Complete(c)
}
