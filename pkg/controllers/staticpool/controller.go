package staticpool

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/controllers/index"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// Name is the controller's name in logs and metrics.
const Name = "staticpool"

// resync re-checks a static NodePool now and then, as the reference's
// controllers requeue, so a missed event cannot leave it short.
const resync = time.Minute

// Controller reconciles static NodePools.
type Controller struct {
	client  client.Client
	reader  client.Reader
	clock   clock.Clock
	applier *apply.Applier
}

// Deps are what the controller works with.
type Deps struct {
	// Client reads NodePools, Nodes and Pods (the manager's cache, with
	// the index.PodNode index) and writes NodeClaims.
	Client client.Client
	// Reader lists NodeClaims uncached: a NodeClaim created a moment ago
	// must count, or the next reconcile launches it again.
	Reader   client.Reader
	Recorder events.EventRecorder
	Clock    clock.Clock
	// Counters count the NodeClaims created
	// (scaleup.MetricNodeClaimsCreated, the provisioner's).
	Counters *apply.Counters
}

// New returns the controller.
func New(deps Deps) *Controller {
	return &Controller{client: deps.Client, reader: deps.Reader, clock: deps.Clock,
		applier: apply.New(apply.Deps{Client: deps.Client, Recorder: deps.Recorder, Clock: deps.Clock, Counters: deps.Counters})}
}

// Register adds the controller to mgr: it reconciles a NodePool when it
// changes (kubectl scale) and when one of its NodeClaims does.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&v1.NodePool{}).
		Watches(&v1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if name := o.GetLabels()[v1.NodePoolLabelKey]; name != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
			}
			return nil
		})).
		Complete(c)
	if err != nil {
		return fmt.Errorf("registering %s controller, %w", Name, err)
	}
	return nil
}

// Reconcile gathers a static NodePool's NodeClaims, nodes and pods,
// decides and applies.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	np := &v1.NodePool{}
	if err := c.client.Get(ctx, req.NamespacedName, np); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !np.Static() || np.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	in, err := c.gather(ctx, np)
	if err != nil {
		return reconcile.Result{}, err
	}
	d := scaleup.DecideStatic(in, c.clock.Now(), func(pool string) string { return pool + "-" + rand.String(5) })
	if len(d.Create)+len(d.Delete) > 0 {
		log.FromContext(ctx).Info("scaling static nodepool", "nodepool", np.Name, "desired", d.Desired, "active", d.Active,
			"create", len(d.Create), "delete", len(d.Delete))
	}
	if _, err := c.applier.Apply(ctx, d.Effects()); err != nil {
		return reconcile.Result{}, fmt.Errorf("scaling static nodepool %s, %w", np.Name, err)
	}
	return reconcile.Result{RequeueAfter: resync}, nil
}

func (c *Controller) gather(ctx context.Context, np *v1.NodePool) (scaleup.StaticInput, error) {
	in := scaleup.StaticInput{NodePool: np, Nodes: map[string]*corev1.Node{}, Pods: map[string][]*corev1.Pod{},
		Usable: meta.IsStatusConditionTrue(np.Status.Conditions, v1.ConditionTypeReady)}
	claims := &v1.NodeClaimList{}
	if err := c.reader.List(ctx, claims, client.MatchingLabels{v1.NodePoolLabelKey: np.Name}); err != nil {
		return in, fmt.Errorf("listing nodeclaims of nodepool %s, %w", np.Name, err)
	}
	for i := range claims.Items {
		nc := &claims.Items[i]
		in.NodeClaims = append(in.NodeClaims, nc)
		node, err := index.NodeOf(ctx, c.client, nc)
		if err != nil {
			return in, err
		}
		if node == nil {
			continue
		}
		// The step finds a NodeClaim's node by status.nodeName.
		nc.Status.NodeName = node.Name
		in.Nodes[node.Name] = node
		pods := &corev1.PodList{}
		if err := c.client.List(ctx, pods, client.MatchingFields{index.PodNode: node.Name}); err != nil {
			return in, fmt.Errorf("listing pods of node %s, %w", node.Name, err)
		}
		for j := range pods.Items {
			in.Pods[node.Name] = append(in.Pods[node.Name], &pods.Items[j])
		}
	}
	return in, nil
}
