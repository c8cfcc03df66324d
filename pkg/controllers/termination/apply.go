package termination

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/drain"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// apply carries out a termination step against the API server and the
// cloud, and says when to look again.
func (c *Controller) apply(ctx context.Context, step drain.Step) (reconcile.Result, error) {
	requeue := step.Poll
	for _, e := range step.Effects {
		if at, ok := e.(effects.RequeueAt); ok {
			if wait := at.At.Sub(c.clock.Now()); wait > 0 && (requeue == 0 || wait < requeue) {
				requeue = wait
			}
			continue
		}
		if err := c.applyOne(ctx, e); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

func (c *Controller) applyOne(ctx context.Context, e effects.Effect) error {
	switch e := e.(type) {
	case effects.PatchNode:
		node := &corev1.Node{}
		if err := c.client.Get(ctx, client.ObjectKey{Name: e.Name}, node); err != nil {
			return client.IgnoreNotFound(err)
		}
		patch := client.MergeFrom(node.DeepCopy())
		node.Spec.Taints = append(node.Spec.Taints, e.AddTaints...)
		return client.IgnoreNotFound(c.client.Patch(ctx, node, patch))
	case effects.DeleteNode:
		node := &corev1.Node{}
		node.Name = e.Name
		if err := client.IgnoreNotFound(c.client.Delete(ctx, node)); err != nil {
			return fmt.Errorf("deleting node %s, %w", e.Name, err)
		}
	case effects.DeleteNodeClaim:
		nc := &v1.NodeClaim{}
		nc.Name = e.Name
		if err := client.IgnoreNotFound(c.client.Delete(ctx, nc)); err != nil {
			return fmt.Errorf("deleting nodeclaim %s, %w", e.Name, err)
		}
	case effects.EvictPod:
		p := &corev1.Pod{}
		p.Name, p.Namespace = e.Name, e.Namespace
		eviction := &policyv1.Eviction{}
		eviction.Name, eviction.Namespace = e.Name, e.Namespace
		err := c.client.SubResource("eviction").Create(ctx, p, eviction)
		switch {
		// A PDB refusing (429) is retried later; a namespace being
		// deleted refuses evictions, its pods are going anyway.
		case err == nil, apierrors.IsNotFound(err), apierrors.IsTooManyRequests(err), apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		default:
			return fmt.Errorf("evicting pod %s/%s, %w", e.Namespace, e.Name, err)
		}
	case effects.DeletePod:
		p := &corev1.Pod{}
		p.Name, p.Namespace = e.Name, e.Namespace
		if err := client.IgnoreNotFound(c.client.Delete(ctx, p, client.GracePeriodSeconds(*e.GracePeriodSeconds))); err != nil {
			return fmt.Errorf("deleting pod %s/%s, %w", e.Namespace, e.Name, err)
		}
	case effects.Event:
		var obj client.Object
		switch e.Object.Kind {
		case effects.KindPod:
			obj = &corev1.Pod{}
		case effects.KindNodeClaim:
			obj = &v1.NodeClaim{}
		}
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: e.Object.Namespace, Name: e.Object.Name}, obj); err == nil {
			c.recorder.Eventf(obj, nil, e.Type, e.Reason, e.Action, "%s", e.Message)
		}
	case effects.Observe:
		c.slack.Observe(e.Value)
	case effects.Terminate:
		if err := cloudprovider.IgnoreNodeClaimNotFound(c.cloud.Delete(ctx, e.NodeClaim)); err != nil {
			return fmt.Errorf("terminating the instance of nodeclaim %s, %w", e.NodeClaim.Name, err)
		}
	case effects.RemoveFinalizer:
		var obj client.Object = &corev1.Node{}
		if e.Object.Kind == effects.KindNodeClaim {
			obj = &v1.NodeClaim{}
		}
		if err := c.client.Get(ctx, client.ObjectKey{Name: e.Object.Name}, obj); err != nil {
			return client.IgnoreNotFound(err)
		}
		patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
		controllerutil.RemoveFinalizer(obj, e.Finalizer)
		if err := client.IgnoreNotFound(c.client.Patch(ctx, obj, patch)); err != nil {
			return fmt.Errorf("removing finalizer from %s %s, %w", e.Object.Kind, e.Object.Name, err)
		}
	}
	return nil
}
