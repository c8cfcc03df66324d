package ec2nodeclass

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// Name is the controller's name in logs and metrics.
const Name = "ec2nodeclass"

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
}

// Controller keeps EC2NodeClass status in step with EC2.
type Controller struct {
	client            client.Client
	ec2               EC2
	clock             clock.Clock
	recorder          events.EventRecorder
	kubernetesVersion string
	refresh           time.Duration
	notReady          time.Duration
}

// New returns the EC2NodeClass status controller. c reads EC2NodeClasses
// and patches their status; api is asked on every reconcile; clk is now
// for Resolve and condition transitions; recorder says on the class why
// it turned not Ready.
func New(c client.Client, api EC2, clk clock.Clock, recorder events.EventRecorder, opts Options) *Controller {
	refresh := opts.RefreshPeriod
	if refresh <= 0 {
		refresh = DefaultRefreshPeriod
	}
	notReady := opts.NotReadyRefreshPeriod
	if notReady <= 0 {
		notReady = DefaultNotReadyRefreshPeriod
	}
	return &Controller{client: c, ec2: api, clock: clk, recorder: recorder,
		kubernetesVersion: opts.KubernetesVersion, refresh: refresh, notReady: notReady}
}

// Register adds the controller to mgr. Status-only updates (its own
// patches) are ignored; the requeue after each reconcile covers changes
// in EC2.
func (c *Controller) Register(mgr manager.Manager) error {
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&awsv1.EC2NodeClass{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(c)
	if err != nil {
		return fmt.Errorf("registering %s controller, %w", Name, err)
	}
	return nil
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
		return reconcile.Result{}, nil
	}
	now := c.clock.Now()
	found := Gather(ctx, c.ec2, nc, c.kubernetesVersion)
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
	if err := found.Err(); err != nil {
		return reconcile.Result{}, fmt.Errorf("resolving ec2nodeclass %s, %w", nc.Name, err)
	}
	return reconcile.Result{RequeueAfter: RequeueAfter(status, now, c.refresh, c.notReady)}, nil
}
