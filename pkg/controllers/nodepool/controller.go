package nodepool

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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
)

// Name is the controller's name in logs and metrics.
const Name = "nodepool"

// Controller reconciles NodePools: hash annotations, status.resources
// and conditions.
type Controller struct {
	client    client.Client
	clock     clock.Clock
	applier   *apply.Applier
	supported []schema.GroupVersionKind
}

// Deps are what the controller works with.
type Deps struct {
	// Client reads and patches NodePools and reads NodeClaims and the
	// NodeClasses of the supported kinds (the manager's cached client in
	// the binary, whose scheme must know them).
	Client client.Client
	// Clock stamps condition transitions.
	Clock clock.Clock
	// Recorder says on the NodePool why nothing is launched from it.
	Recorder events.EventRecorder
}

// Options configure the controller.
type Options struct {
	// NodeClasses are the kinds a nodeClassRef may name: the cloud
	// provider's GetSupportedNodeClasses.
	NodeClasses []schema.GroupVersionKind
}

// New returns the NodePool controller.
func New(deps Deps, opts Options) *Controller {
	return &Controller{client: deps.Client, clock: deps.Clock, supported: opts.NodeClasses,
		applier: apply.New(apply.Deps{Client: deps.Client, Recorder: deps.Recorder, Clock: deps.Clock})}
}

// Register adds the controller to mgr. It reconciles a NodePool when it
// changes, when one of its NodeClaims (by the karpenter.sh/nodepool label)
// does, and when the NodeClass it references does.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	b := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&v1.NodePool{}).
		Watches(&v1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(nodePoolOfNodeClaim))
	for _, gvk := range c.supported {
		obj, err := c.newObject(gvk)
		if err != nil {
			return fmt.Errorf("registering %s controller, %w", Name, err)
		}
		b = b.Watches(obj, handler.EnqueueRequestsFromMapFunc(c.nodePoolsOfNodeClass(gvk.GroupKind())))
	}
	if err := b.Complete(c); err != nil {
		return fmt.Errorf("registering %s controller, %w", Name, err)
	}
	return nil
}

// newObject is an empty NodeClass of kind gvk, from the client's scheme.
func (c *Controller) newObject(gvk schema.GroupVersionKind) (client.Object, error) {
	o, err := c.client.Scheme().New(gvk)
	if err != nil {
		return nil, fmt.Errorf("nodeclass kind %s, %w", gvk, err)
	}
	obj, ok := o.(client.Object)
	if !ok {
		return nil, fmt.Errorf("nodeclass kind %s is not an object", gvk)
	}
	return obj, nil
}

// Reconcile gathers the NodePool, its NodeClaims and its NodeClass, calls
// Step and hands what changed (Decision.Effects) to the applier, which
// patches the annotations with a metadata merge patch and the status with
// a merge patch of the status subresource. Neither patch carries a
// resourceVersion, so neither conflicts.
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

	d := Step(Input{NodePool: np, NodeClaims: claims.Items, Supported: c.supported, NodeClass: nodeClass}, c.clock.Now())

	if _, err := c.applier.Apply(ctx, d.Effects(np)); err != nil {
		return reconcile.Result{}, fmt.Errorf("applying the status of nodepool %s, %w", np.Name, err)
	}
	return reconcile.Result{}, nil
}

// nodeClass reads the referenced NodeClass, nil when the reference is to
// a kind the provider does not serve or the NodeClass does not exist.
func (c *Controller) nodeClass(ctx context.Context, ref *v1.NodeClassReference) (*NodeClass, error) {
	gvk, ok := SupportedKind(ref, c.supported)
	if !ok {
		return nil, nil
	}
	obj, err := c.newObject(gvk)
	if err != nil {
		return nil, err
	}
	if err := c.client.Get(ctx, types.NamespacedName{Name: ref.Name}, obj); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	ready, err := readyCondition(obj)
	if err != nil {
		return nil, fmt.Errorf("reading %s %s conditions, %w", gvk.Kind, ref.Name, err)
	}
	return &NodeClass{Deleting: obj.GetDeletionTimestamp() != nil, Ready: ready}, nil
}

// readyCondition is obj's status.conditions Ready entry, nil when it has
// none: every NodeClass kind (SimNodeClass, EC2NodeClass) keeps standard
// conditions there.
func readyCondition(obj client.Object) (*metav1.Condition, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	raw, _, err := unstructured.NestedSlice(u, "status", "conditions")
	if err != nil {
		return nil, err
	}
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok || m["type"] != v1.ConditionTypeReady {
			continue
		}
		c := &metav1.Condition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, c); err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, nil
}

// nodePoolsOfNodeClass maps a NodeClass of kind gk to the NodePools that
// reference it.
func (c *Controller) nodePoolsOfNodeClass(gk schema.GroupKind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		nps := &v1.NodePoolList{}
		if err := c.client.List(ctx, nps); err != nil {
			log.FromContext(ctx).Error(err, "listing nodepools for a nodeclass", "kind", gk.Kind, "name", o.GetName())
			return nil
		}
		var reqs []reconcile.Request
		for i := range nps.Items {
			if References(&nps.Items[i], gk, o.GetName()) {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: nps.Items[i].Name}})
			}
		}
		return reqs
	}
}

func nodePoolOfNodeClaim(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[v1.NodePoolLabelKey]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
}
