package provisioningrequest

import (
	"context"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/provreq"
)

// Name is the controller's name in logs and metrics.
const Name = "provisioningrequest"

// NewMetrics registers provreq.MetricProvisionedSeconds, the time from a
// request's creation to Provisioned, and adds it to counters for the
// applier.
func NewMetrics(reg prometheus.Registerer, counters *apply.Counters) error {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    provreq.MetricProvisionedSeconds,
		Help:    "Time from a ProvisioningRequest's creation to its Provisioned condition.",
		Buckets: []float64{1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600},
	})
	if err := reg.Register(h); err != nil {
		return fmt.Errorf("registering %s, %w", provreq.MetricProvisionedSeconds, err)
	}
	counters.AddHistogram(provreq.MetricProvisionedSeconds, h)
	return nil
}

// Deps are what the controller works with.
type Deps struct {
	// Client reads requests, PodTemplates, pods and NodeClaims (the
	// manager's cache).
	Client client.Client
	// Cluster builds the snapshot the requests' pods are solved against.
	Cluster *clusterstate.Cluster
	// Applier sets the conditions, records events and the metric and
	// triggers the provisioner for a pending atomic request.
	Applier *apply.Applier
	Clock   clock.Clock
}

// Controller reconciles ProvisioningRequests.
type Controller struct {
	deps Deps
	opts provreq.Options
}

// New returns the controller.
func New(deps Deps, opts provreq.Options) *Controller {
	return &Controller{deps: deps, opts: opts}
}

// Register adds the controller to mgr: a request is reconciled when it
// changes, when a NodeClaim of its atomic group does and when a pod
// consuming it does.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&autoscalingv1.ProvisioningRequest{}).
		Watches(&v1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return requestOfGroup(o.GetAnnotations()[gang.AtomicGroupAnnotationKey])
		})).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if name := o.GetAnnotations()[autoscalingv1.ProvisioningRequestPodAnnotationKey]; name != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
			}
			return nil
		})).
		Complete(c)
	if err != nil {
		return fmt.Errorf("registering %s controller, %w", Name, err)
	}
	return nil
}

// requestOfGroup is the request an atomic group key names, if it names
// one (provreq.Key).
func requestOfGroup(key string) []reconcile.Request {
	rest, ok := strings.CutPrefix(key, provreq.Kind+"/")
	if !ok {
		return nil
	}
	ns, name, ok := strings.Cut(rest, "/")
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// Reconcile gathers one request with the cluster, decides and applies.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pr := &autoscalingv1.ProvisioningRequest{}
	if err := c.deps.Client.Get(ctx, req.NamespacedName, pr); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !provreq.Served(pr.Spec.ProvisioningClassName) || pr.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	objs, snapshot, err := c.deps.Cluster.SnapshotWithObjects(ctx)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("gathering the cluster for provisioningrequest %s, %w", req.NamespacedName, err)
	}
	templates := &corev1.PodTemplateList{}
	if err := c.deps.Client.List(ctx, templates, client.InNamespace(pr.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing podtemplates of provisioningrequest %s, %w", req.NamespacedName, err)
	}
	r := provreq.Requests(provreq.Objects{
		Requests: []autoscalingv1.ProvisioningRequest{*pr}, Templates: templates.Items, Pods: objs.Pods, NodeClaims: objs.NodeClaims,
	})[0]
	d := provreq.Decide(r, snapshot, c.opts, c.deps.Clock.Now())
	if len(d.Conditions) > 0 {
		log.FromContext(ctx).Info("provisioningrequest", "phase", d.Phase, "reason", d.Reason, "nodeclaims", len(d.Claims), "virtualPods", len(d.Virtual))
	}
	requeue, err := c.deps.Applier.Apply(ctx, d.Effects(pr))
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("applying provisioningrequest %s, %w", req.NamespacedName, err)
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}
