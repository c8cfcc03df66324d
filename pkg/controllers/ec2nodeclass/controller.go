package ec2nodeclass

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	awsprovider "github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

// Name is the controller's name in logs and metrics.
const Name = "ec2nodeclass"

// Deps are what the controller works with.
type Deps struct {
	// Client reads EC2NodeClasses and NodeClaims and patches the classes'
	// status and finalizers.
	Client client.Client
	// EC2 is asked on every reconcile.
	EC2 EC2
	// SSM reads the image ids of amiSelectorTerms' ssmParameter; nil: a
	// class with such a term is not Ready.
	SSM SSM
	// IAM makes the instance profile of a class with spec.role; nil: such
	// a class is not Ready.
	IAM IAM
	// Clock is now for Resolve and condition transitions.
	Clock clock.Clock
	// Recorder says on the class why it turned not Ready.
	Recorder events.EventRecorder
	// Cluster is what nodes join; a class whose AMI family needs what it
	// cannot tell is not valid (ReasonClusterResolutionFailed).
	Cluster awsprovider.Cluster
}

// Options configure the controller.
type Options struct {
	// KubernetesVersion is the cluster's Kubernetes version, such as 1.30
	// or v1.30.2; an alias resolves to the images built for its minor
	// version. Without it, a class with an alias is not Ready
	// (ReasonKubernetesVersionUnknown).
	KubernetesVersion string
	// RefreshPeriod is the longest a Ready class goes without being
	// resolved again; zero or negative means DefaultRefreshPeriod.
	RefreshPeriod time.Duration
	// NotReadyRefreshPeriod is the same for a class that is not Ready;
	// zero or negative means DefaultNotReadyRefreshPeriod.
	NotReadyRefreshPeriod time.Duration
	// ClusterName and Region name the instance profiles made for
	// spec.role (InstanceProfileName) and tag them.
	ClusterName string
	Region      string
}

// Controller keeps EC2NodeClass status in step with EC2.
type Controller struct {
	client            client.Client
	ec2               EC2
	ssm               SSM
	iam               IAM
	clock             clock.Clock
	recorder          events.EventRecorder
	kubernetesVersion string
	refresh           time.Duration
	notReady          time.Duration
	clusterName       string
	region            string
	cluster           awsprovider.Cluster
}

// New returns the EC2NodeClass status controller. It fails when any of
// deps but IAM is missing.
func New(deps Deps, opts Options) (*Controller, error) {
	if deps.Client == nil || deps.EC2 == nil || deps.Clock == nil || deps.Recorder == nil || deps.Cluster == nil {
		return nil, errors.New("ec2nodeclass controller needs a client, an EC2 client, a clock, an event recorder and the cluster")
	}
	refresh := opts.RefreshPeriod
	if refresh <= 0 {
		refresh = DefaultRefreshPeriod
	}
	notReady := opts.NotReadyRefreshPeriod
	if notReady <= 0 {
		notReady = DefaultNotReadyRefreshPeriod
	}
	return &Controller{client: deps.Client, ec2: deps.EC2, ssm: deps.SSM, iam: deps.IAM, clock: deps.Clock, recorder: deps.Recorder,
		kubernetesVersion: opts.KubernetesVersion, refresh: refresh, notReady: notReady,
		clusterName: opts.ClusterName, region: opts.Region, cluster: deps.Cluster}, nil
}

// Register adds the controller to mgr. Status-only updates (its own
// patches) are ignored, but not a deletion nor a new spot max price
// annotation (which ValidationSucceeded checks); the requeue after each
// reconcile covers changes in EC2. A deleted NodeClaim wakes its class,
// which may be waiting for it to go.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	deleting := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectNew.GetDeletionTimestamp() != nil && e.ObjectOld.GetDeletionTimestamp() == nil
	}}
	maxPrice := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok := e.ObjectOld.GetAnnotations()[awsv1.SpotMaxPriceAnnotationKey]
		now, set := e.ObjectNew.GetAnnotations()[awsv1.SpotMaxPriceAnnotationKey]
		return old != now || ok != set
	}}
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&awsv1.EC2NodeClass{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, deleting, maxPrice))).
		Watches(&v1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(nodeClassOf), builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(event.UpdateEvent) bool { return false },
			DeleteFunc: func(event.DeleteEvent) bool { return true },
		})).
		Complete(c)
	if err != nil {
		return fmt.Errorf("registering %s controller, %w", Name, err)
	}
	return nil
}

// nodeClassOf is the EC2NodeClass a NodeClaim references, if any.
func nodeClassOf(_ context.Context, obj client.Object) []reconcile.Request {
	claim, ok := obj.(*v1.NodeClaim)
	if !ok || claim.Spec.NodeClassRef == nil || len(NodeClaimsOf([]v1.NodeClaim{*claim}, claim.Spec.NodeClassRef.Name)) == 0 {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: claim.Spec.NodeClassRef.Name}}}
}

// Reconcile gathers what the class's terms select from EC2, resolves the
// status with Resolve, records a Warning event when Ready turns False,
// patches the status with a merge patch of the status subresource (no
// resourceVersion, so no conflict) when it changed, and requeues with
// RequeueAfter. A failed describe call is returned after the patch, so
// controller-runtime retries with backoff.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &awsv1.EC2NodeClass{}
	if err := c.client.Get(ctx, req.NamespacedName, nc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if nc.DeletionTimestamp != nil {
		return c.finalize(ctx, nc)
	}
	if NeedsFinalizer(nc) && !controllerutil.ContainsFinalizer(nc, TerminationFinalizer) {
		// Before the profile is made, so that it is never left behind.
		patched := nc.DeepCopy()
		controllerutil.AddFinalizer(patched, TerminationFinalizer)
		if err := c.client.Patch(ctx, patched, client.MergeFromWithOptions(nc, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("adding finalizer to ec2nodeclass %s, %w", nc.Name, err))
		}
		nc = patched
	}
	now := c.clock.Now()
	found := Gather(ctx, c.ec2, c.ssm, nc, c.kubernetesVersion)
	found.Bootstrap, found.BootstrapErr = c.cluster.Bootstrap(ctx)
	if nc.Spec.Role != "" && (nc.Spec.InstanceProfile == nil || *nc.Spec.InstanceProfile == "") {
		found.InstanceProfile, found.InstanceProfileErr = EnsureInstanceProfile(ctx, c.iam, nc, c.clusterName, c.region)
	}
	status := Resolve(nc, found, now)
	if ev := FailureEvent(nc.Status.Conditions, status.Conditions); ev != nil {
		c.recorder.Eventf(nc, nil, corev1.EventTypeWarning, ev.Reason, "Resolve", "%s", ev.Message)
	}
	if !equality.Semantic.DeepEqual(nc.Status, status) {
		patched := nc.DeepCopy()
		patched.Status = status
		if err := c.client.Status().Patch(ctx, patched, client.MergeFrom(nc)); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("updating ec2nodeclass %s status, %w", nc.Name, err))
		}
		log.FromContext(ctx).V(1).Info("updated ec2nodeclass status", "subnets", len(status.Subnets),
			"securityGroups", len(status.SecurityGroups), "amis", len(status.AMIs), "capacityReservations", len(status.CapacityReservations))
	}
	if err := c.stamp(ctx, nc, found.Bootstrap.CABundle); err != nil {
		return reconcile.Result{}, err
	}
	if err := found.Err(); err != nil {
		return reconcile.Result{}, fmt.Errorf("resolving ec2nodeclass %s, %w", nc.Name, err)
	}
	return reconcile.Result{RequeueAfter: RequeueAfter(status, now, c.refresh, c.notReady)}, nil
}

// stamp writes the hash annotations HashStamps decides: the NodeClaims'
// first, so that a failure leaves the class's old version in place and
// the next reconcile stamps them again.
func (c *Controller) stamp(ctx context.Context, nc *awsv1.EC2NodeClass, caBundle string) error {
	var claims []v1.NodeClaim
	if nc.Annotations[awsprovider.NodeClassHashVersionAnnotationKey] != awsprovider.NodeClassHashVersion {
		list := &v1.NodeClaimList{}
		if err := c.client.List(ctx, list); err != nil {
			return fmt.Errorf("listing nodeclaims, %w", err)
		}
		claims = list.Items
	}
	stamps := HashStamps(nc, claims, caBundle)
	for i := range stamps.Claims {
		patched := &stamps.Claims[i]
		base := patched.DeepCopy()
		base.Annotations = nil
		if err := c.client.Patch(ctx, patched, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("stamping nodeclaim %s with the ec2nodeclass hash, %w", patched.Name, err)
		}
	}
	if stamps.Class == nil {
		return nil
	}
	patched := nc.DeepCopy()
	patched.Annotations = stamps.Class
	if err := c.client.Patch(ctx, patched, client.MergeFrom(nc)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("stamping ec2nodeclass %s with its hash, %w", nc.Name, err))
	}
	return nil
}

// finalize deletes a class that carries TerminationFinalizer: once no
// NodeClaim references it (until then it says so in an event and waits,
// woken by their deletion or every minute), it deletes the instance
// profile made for its role and removes the finalizer.
func (c *Controller) finalize(ctx context.Context, nc *awsv1.EC2NodeClass) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(nc, TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	claims := &v1.NodeClaimList{}
	if err := c.client.List(ctx, claims); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing nodeclaims, %w", err)
	}
	if names := NodeClaimsOf(claims.Items, nc.Name); len(names) > 0 {
		c.recorder.Eventf(nc, nil, corev1.EventTypeNormal, "WaitingOnNodeClaimTermination", "Delete", "%s", WaitingMessage(names))
		return reconcile.Result{RequeueAfter: time.Minute}, nil
	}
	name := InstanceProfileName(c.clusterName, c.region, nc.Name)
	if err := DeleteInstanceProfile(ctx, c.iam, name); err != nil {
		return reconcile.Result{}, fmt.Errorf("finalizing ec2nodeclass %s, %w", nc.Name, err)
	}
	patched := nc.DeepCopy()
	controllerutil.RemoveFinalizer(patched, TerminationFinalizer)
	if err := c.client.Patch(ctx, patched, client.MergeFromWithOptions(nc, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("removing finalizer from ec2nodeclass %s, %w", nc.Name, err))
	}
	log.FromContext(ctx).V(1).Info("deleted the instance profile of the ec2nodeclass", "instanceProfile", name)
	return reconcile.Result{}, nil
}
