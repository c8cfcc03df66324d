package nodeclaim

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	reader          client.Reader
	cloud           cloudprovider.CloudProvider
	unavailable     *cloudprovider.UnavailableOfferings
	provisioner     Provisioner
	recorder        events.EventRecorder
	clock           clock.Clock
	registrationTTL time.Duration
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
func New(c client.Client, reader client.Reader, cloud cloudprovider.CloudProvider, unavailable *cloudprovider.UnavailableOfferings, p Provisioner, recorder events.EventRecorder, clk clock.Clock, registrationTTL time.Duration) *Controller {
	return &Controller{client: c, reader: reader, cloud: cloud, unavailable: unavailable, provisioner: p, recorder: recorder, clock: clk, registrationTTL: registrationTTL}
}

// Reconcile gathers the NodeClaim and its Node, asks Next what to do and
// does it.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &v1.NodeClaim{}
	if err := c.client.Get(ctx, req.NamespacedName, nc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("nodeclaim", nc.Name))
	node, err := c.nodeFor(ctx, nc)
	if err != nil {
		return reconcile.Result{}, err
	}
	if nc.DeletionTimestamp != nil {
		return reconcile.Result{}, nil // the termination controller's
	}
	if !controllerutil.ContainsFinalizer(nc, v1.TerminationFinalizer) {
		patch := client.MergeFrom(nc.DeepCopy())
		controllerutil.AddFinalizer(nc, v1.TerminationFinalizer)
		if err := c.client.Patch(ctx, nc, patch); err != nil {
			return reconcile.Result{}, fmt.Errorf("adding finalizer to nodeclaim %s, %w", nc.Name, err)
		}
	}
	action, wait := lifecycle.Next(nc, node, c.clock.Now(), c.registrationTTL)
	switch action {
	case lifecycle.Launch:
		return reconcile.Result{}, c.launch(ctx, nc)
	case lifecycle.Register:
		return reconcile.Result{}, c.register(ctx, nc, node)
	case lifecycle.Initialize:
		return reconcile.Result{}, c.initialize(ctx, nc, node)
	case lifecycle.Expire:
		c.recorder.Eventf(nc, nil, corev1.EventTypeWarning, "RegistrationTimeout", "Delete", "no node registered within %s of launch", c.registrationTTL)
		return reconcile.Result{}, client.IgnoreNotFound(c.client.Delete(ctx, nc))
	case lifecycle.Wait:
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	return reconcile.Result{}, nil
}

func (c *Controller) launch(ctx context.Context, nc *v1.NodeClaim) error {
	latest := &v1.NodeClaim{}
	if err := c.reader.Get(ctx, client.ObjectKeyFromObject(nc), latest); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("reading nodeclaim %s before launch, %w", nc.Name, err))
	}
	if latest.Status.ProviderID != "" || latest.DeletionTimestamp != nil {
		return nil // launched already (the cache lags) or going away
	}
	created, err := c.cloud.Create(ctx, nc)
	if ice, ok := cloudprovider.AsInsufficientCapacityError(err); ok {
		marked := 0
		if c.unavailable != nil {
			marked = c.unavailable.MarkFromError(err)
		}
		log.FromContext(ctx).Info("insufficient capacity; offerings marked unavailable", "offerings", len(ice.Offerings), "marks", marked, "error", ice.Error())
		c.recorder.Eventf(nc, nil, corev1.EventTypeWarning, "InsufficientCapacity", "Launch", "%s", ice.Error())
		if err := client.IgnoreNotFound(c.client.Delete(ctx, nc)); err != nil {
			return fmt.Errorf("deleting nodeclaim %s after insufficient capacity, %w", nc.Name, err)
		}
		c.provisioner.LaunchFailed(nc.Name)
		return nil
	}
	if err != nil {
		c.recorder.Eventf(nc, nil, corev1.EventTypeWarning, "LaunchFailed", "Launch", "%s", err.Error())
		return fmt.Errorf("launching nodeclaim %s, %w", nc.Name, err)
	}
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
		return fmt.Errorf("labelling and annotating nodeclaim %s, %w", nc.Name, err)
	}
	status := client.MergeFrom(nc.DeepCopy())
	nc.Status.ProviderID = created.Status.ProviderID
	nc.Status.ImageID = created.Status.ImageID
	nc.Status.Capacity = created.Status.Capacity
	nc.Status.Allocatable = created.Status.Allocatable
	c.setCondition(nc, v1.ConditionTypeLaunched, metav1.ConditionTrue, "Launched", "instance "+created.Status.ProviderID)
	c.setReady(nc)
	if err := c.client.Status().Patch(ctx, nc, status); err != nil {
		return fmt.Errorf("recording launch of nodeclaim %s, %w", nc.Name, err)
	}
	c.recorder.Eventf(nc, nil, corev1.EventTypeNormal, "Launched", "Launch", "launched %s (%s, %s)", nc.Labels[v1.LabelInstanceType], nc.Labels[v1.CapacityTypeLabelKey], nc.Labels[v1.LabelZone])
	return nil
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
