package simulator

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/drain"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// applyTermination carries out a termination step in the world, as the
// API server, the eviction API and the cloud would; it reports a change.
func (s *Simulator) applyTermination(ctx context.Context, step drain.Step, now time.Time) (bool, error) {
	changed := false
	for _, e := range step.Effects {
		switch e := e.(type) {
		case effects.PatchNode:
			node := s.world.nodes[e.Name]
			if node == nil {
				continue
			}
			for _, t := range e.AddTaints {
				if !slices.ContainsFunc(node.Spec.Taints, func(have corev1.Taint) bool { return have.MatchTaint(&t) }) {
					node.Spec.Taints = append(node.Spec.Taints, t)
					changed = true
				}
			}
		case effects.DeleteNode:
			if node := s.world.nodes[e.Name]; node != nil && node.DeletionTimestamp == nil {
				at := metav1.NewTime(now)
				node.DeletionTimestamp = &at
				// The provisioner watches deleting nodes: their pods need
				// places before they are evicted.
				s.batch.Trigger(now, false)
				changed = true
			}
		case effects.EvictPod:
			p := s.world.pods[e.Namespace+"/"+e.Name]
			if p == nil || drain.Evictable(p, s.world.namespacePDBs(p.Namespace)) != nil {
				continue
			}
			s.world.deletePod(p)
			changed = true
		case effects.DeletePod:
			if p := s.world.pods[e.Namespace+"/"+e.Name]; p != nil {
				s.world.deletePod(p)
				changed = true
			}
		case effects.RequeueAt:
			s.drainWakes = append(s.drainWakes, e.At)
		case effects.Terminate:
			if err := cloudprovider.IgnoreNodeClaimNotFound(s.cloud.Delete(ctx, e.NodeClaim)); err != nil {
				return false, fmt.Errorf("terminating the instance of nodeclaim %s, %w", e.NodeClaim.Name, err)
			}
			changed = true
		case effects.RemoveFinalizer:
			if e.Object.Kind == effects.KindNodeClaim {
				if nc := s.world.claims[e.Object.Name]; nc != nil {
					s.removeClaim(nc, deletionReason(nc))
					changed = true
				}
			}
		}
	}
	if changed {
		s.world.changed()
	}
	return changed, nil
}
