package nodepool

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Name is the controller's name in logs and metrics.
const Name = "nodepool"

// Controller reconciles NodePools: hash annotations, status.resources
// and conditions.
type Controller struct {
	client   client.Client
	clock    clock.Clock
	recorder events.EventRecorder
}

// New returns the NodePool controller. c reads and patches NodePools and
// reads NodeClaims and SimNodeClasses (the manager's cached client in the
// binary); clk stamps condition transitions; recorder says on the NodePool
// why nothing is launched from it.
func New(c client.Client, clk clock.Clock, recorder events.EventRecorder) *Controller {
	return &Controller{client: c, clock: clk, recorder: recorder}
}

// Register adds the controller to mgr. It reconciles a NodePool when it
// changes, when one of its NodeClaims (by the karpenter.sh/nodepool label)
// does, and when a SimNodeClass it references does.
func (c *Controller) Register(mgr manager.Manager) error {
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&v1.NodePool{}).
		Watches(&v1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(nodePoolOfNodeClaim)).
		Watches(&simv1alpha1.SimNodeClass{}, handler.EnqueueRequestsFromMapFunc(c.nodePoolsOfNodeClass)).
		Complete(c)
	if err != nil {
		return fmt.Errorf("registering %s controller, %w", Name, err)
	}
	return nil
}

// Reconcile gathers the NodePool, its NodeClaims and its NodeClass, calls
// Step and patches what changed: the annotations with a metadata merge
// patch, the status with a merge patch of the status subresource. Neither
// patch carries a resourceVersion, so neither conflicts.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	np := &v1.NodePool{}
	if err := c.client.Get(ctx, req.NamespacedName, np); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if np.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	claims := &v1.NodeClaimList{}
	if err := c.client.List(ctx, claims, client.MatchingLabels{v1.NodePoolLabelKey: np.Name}); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing nodeclaims of nodepool %s, %w", np.Name, err)
	}
	nodeClass, err := c.nodeClass(ctx, np.Spec.Template.Spec.NodeClassRef)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("getting nodeclass of nodepool %s, %w", np.Name, err)
	}

	d := Step(Input{NodePool: np, NodeClaims: claims.Items, NodeClass: nodeClass}, c.clock.Now())

	if !hasAnnotations(np.Annotations, d.Annotations) {
		patched := np.DeepCopy()
		if patched.Annotations == nil {
			patched.Annotations = map[string]string{}
		}
		maps.Copy(patched.Annotations, d.Annotations)
		if err := c.client.Patch(ctx, patched, client.MergeFrom(np)); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("annotating nodepool %s with its hash, %w", np.Name, err))
		}
		log.FromContext(ctx).V(1).Info("annotated nodepool with its hash", "hash", d.Annotations[v1.NodePoolHashAnnotationKey])
	}
	for _, ev := range FailureEvents(np.Status.Conditions, d.Status.Conditions) {
		c.recorder.Eventf(np, nil, corev1.EventTypeWarning, ev.Reason, "Provision", "%s", ev.Message)
	}
	if !equality.Semantic.DeepEqual(np.Status, d.Status) {
		patched := np.DeepCopy()
		patched.Status = d.Status
		if err := c.client.Status().Patch(ctx, patched, client.MergeFrom(np)); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("updating nodepool %s status, %w", np.Name, err))
		}
		log.FromContext(ctx).V(1).Info("updated nodepool status", "nodes", d.Status.Resources.Name(ResourceNodes, resource.DecimalSI).String())
	}
	return reconcile.Result{}, nil
}

// nodeClass returns the referenced SimNodeClass, nil when the reference is
// to another kind or the SimNodeClass does not exist.
func (c *Controller) nodeClass(ctx context.Context, ref *v1.NodeClassReference) (*simv1alpha1.SimNodeClass, error) {
	if !SupportsNodeClass(ref) {
		return nil, nil
	}
	nc := &simv1alpha1.SimNodeClass{}
	if err := c.client.Get(ctx, types.NamespacedName{Name: ref.Name}, nc); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return nc, nil
}

func (c *Controller) nodePoolsOfNodeClass(ctx context.Context, o client.Object) []reconcile.Request {
	nps := &v1.NodePoolList{}
	if err := c.client.List(ctx, nps); err != nil {
		log.FromContext(ctx).Error(err, "listing nodepools for a nodeclass", "simNodeClass", o.GetName())
		return nil
	}
	var reqs []reconcile.Request
	for i := range nps.Items {
		if ReferencesSimNodeClass(&nps.Items[i], o.GetName()) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: nps.Items[i].Name}})
		}
	}
	return reqs
}

func nodePoolOfNodeClaim(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[v1.NodePoolLabelKey]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
}

// hasAnnotations reports whether have carries every entry of want.
func hasAnnotations(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
