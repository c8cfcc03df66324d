package simulator

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/drain"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// applyEffects carries out effects on the world as the API server, the cloud
// and the controller's applier (pkg/controllers/apply) would: a deleted
// NodeClaim with the termination finalizer is drained first, an object
// without finalizers goes at once, an eviction respects disruption
// budgets, a launch's outcome goes to lifecycle.AfterLaunch. Metrics are
// not kept: a run reports its own numbers. It decides nothing.
func (s *Simulator) applyEffects(ctx context.Context, effs []effects.Effect) error {
	var refused []string
	for _, eff := range effs {
		pods, err := s.applyOne(ctx, eff)
		if err != nil {
			return err
		}
		refused = append(refused, pods...)
	}
	if len(refused) > 0 {
		return &effects.RefusedEvictions{Pods: refused}
	}
	return nil
}

// applyOne applies one effect; refused names a pod whose eviction a
// budget refused.
func (s *Simulator) applyOne(ctx context.Context, eff effects.Effect) (refused []string, err error) {
	now := s.clock.Now()
	switch e := eff.(type) {
	case effects.CreateNodeClaim:
		nc := e.NodeClaim.DeepCopy()
		if nc.CreationTimestamp.IsZero() {
			nc.CreationTimestamp = metav1.NewTime(now)
		}
		s.world.claims[nc.Name] = nc
	case effects.DeleteNodeClaim:
		if nc := s.world.claims[e.Name]; nc != nil {
			if nc.DeletionTimestamp == nil {
				s.rec.deletions[nc.Name] = e.Reason
			}
			s.deleteClaim(nc, now)
			s.removeReleased(nc)
		}
	case effects.DeleteNode:
		if node := s.world.nodes[e.Name]; node != nil {
			if node.DeletionTimestamp == nil {
				at := metav1.NewTime(now)
				node.DeletionTimestamp = &at
				// The provisioner watches deleting nodes: their pods need
				// places before they are evicted.
				s.batch.Trigger(now, false)
			}
			s.removeReleased(node)
			s.world.changed()
		}
	case effects.SetCondition:
		return nil, s.setCondition(e.Object, e.Condition, false)
	case effects.RemoveCondition:
		return nil, s.setCondition(e.Object, metav1.Condition{Type: e.Type}, true)
	case effects.MergeMetadata:
		if o := s.object(e.Object); o != nil {
			effects.MergeInto(o, e)
			s.world.changed()
		}
	case effects.RemoveLabels:
		if o := s.object(e.Object); o != nil {
			effects.RemoveLabelsFrom(o, e.Keys)
			s.world.changed()
		}
	case effects.RemoveFinalizer:
		if o := s.object(e.Object); o != nil {
			effects.RemoveFinalizerFrom(o, e.Finalizer)
			s.removeReleased(o)
			s.world.changed()
		}
	case effects.SetNodeClaimStatus:
		s.setStatus(e, now)
	case effects.SetNodePoolStatus:
		if np := s.world.nodePool(e.Name); np != nil {
			np.Status = e.Status
			s.world.changed()
		}
	case effects.PatchNode:
		if node := s.world.nodes[e.Name]; node != nil {
			effects.PatchNodeInto(node, e)
			s.world.changed()
		}
	case effects.Event:
		if e.Object.Kind == effects.KindPod {
			// A pod's warnings are its pending reason in the report (an
			// event each time it changes); so is the node it was
			// nominated to while it waits for it, without an event.
			if warning := e.Type == corev1.EventTypeWarning; warning || e.Reason == scaleup.EventNominated {
				s.rec.pending(now, e.Object.Namespace+"/"+e.Object.Name, warning, e.Reason, e.Message)
			}
			return nil, nil
		}
		s.rec.event(now, e.Reason, objectName(e.Object), e.Message)
	case effects.MarkUnavailable:
		s.unavailable.Mark(e.Error)
	case effects.TriggerSolve:
		s.batch.Trigger(now, e.Immediate)
	case effects.RequeueAt:
		s.requeues = append(s.requeues, e.At)
	case effects.EvictPod:
		p := s.world.pods[e.Namespace+"/"+e.Name]
		if p == nil {
			return nil, nil
		}
		if drain.Evictable(p, s.world.namespacePDBs(p.Namespace)) != nil {
			return []string{podKey(p)}, nil
		}
		s.world.deletePod(p)
	case effects.DeletePod:
		if p := s.world.pods[e.Namespace+"/"+e.Name]; p != nil {
			s.world.deletePod(p)
		}
	case effects.Launch:
		created, err := s.cloud.Create(ctx, e.NodeClaim)
		return nil, s.applyEffects(ctx, lifecycle.AfterLaunch(e.NodeClaim, created, err, s.attempts.Get(e.NodeClaim.Name), now))
	case effects.Terminate:
		if err := cloudprovider.IgnoreNodeClaimNotFound(s.cloud.Delete(ctx, e.NodeClaim)); err != nil {
			return nil, fmt.Errorf("terminating instance %s of nodeclaim %s, %w", e.NodeClaim.Status.ProviderID, e.NodeClaim.Name, err)
		}
	case effects.Metric, effects.Observe:
	case effects.SetLaunchAttempts:
		s.attempts.Set(e)
	default:
		return nil, fmt.Errorf("no way to apply %T", eff)
	}
	return nil, nil
}

// object is the world's object ref names, nil when there is none.
func (s *Simulator) object(ref effects.Ref) metav1.Object {
	switch ref.Kind {
	case effects.KindNodeClaim:
		if nc := s.world.claims[ref.Name]; nc != nil {
			return nc
		}
	case effects.KindNode:
		if n := s.world.nodes[ref.Name]; n != nil {
			return n
		}
	case effects.KindPod:
		if p := s.world.pods[ref.Namespace+"/"+ref.Name]; p != nil {
			return p
		}
	case effects.KindNodePool:
		if np := s.world.nodePool(ref.Name); np != nil {
			return np
		}
	case effects.KindProvisioningRequest:
		for i := range s.world.provreqs {
			if pr := &s.world.provreqs[i]; pr.Namespace == ref.Namespace && pr.Name == ref.Name {
				return pr
			}
		}
	}
	return nil
}

func (s *Simulator) setCondition(ref effects.Ref, c metav1.Condition, remove bool) error {
	o := s.object(ref)
	if o == nil {
		return nil
	}
	return effects.SetConditionInto(o, c, remove)
}

// setStatus records a NodeClaim's status; the report follows its
// instance from the provider id and its node from the node name.
func (s *Simulator) setStatus(e effects.SetNodeClaimStatus, now time.Time) {
	nc := s.world.claims[e.Name]
	if nc == nil {
		return
	}
	launched, registered := nc.Status.ProviderID, nc.Status.NodeName
	effects.SetStatusInto(nc, e)
	if nc.Status.ProviderID != launched {
		s.rec.launched(now, nc, 0)
	}
	if nc.Status.NodeName != registered {
		s.rec.registered(nc.Name, nc.Status.NodeName)
	}
}

// removeReleased removes a deleted object whose last finalizer is gone,
// as the API server does.
func (s *Simulator) removeReleased(o metav1.Object) {
	if o.GetDeletionTimestamp() == nil || len(o.GetFinalizers()) > 0 {
		return
	}
	switch o := o.(type) {
	case *v1.NodeClaim:
		s.removeClaim(o, s.deletionReason(o))
	case *corev1.Node:
		s.world.deleteNode(o)
		s.world.changed()
	}
}

// objectName names an object in the run's events.
func objectName(ref effects.Ref) string {
	name := ref.Name
	if ref.Namespace != "" {
		name = ref.Namespace + "/" + name
	}
	switch ref.Kind {
	case effects.KindNodeClaim:
		return "nodeclaim/" + name
	case effects.KindNode:
		return "node/" + name
	case effects.KindPod:
		return "pod/" + name
	case effects.KindNodePool:
		return "nodepool/" + name
	case effects.KindProvisioningRequest:
		return "provisioningrequest/" + name
	}
	return name
}
