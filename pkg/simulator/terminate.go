package simulator

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/drain"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// deleteClaim deletes a NodeClaim gracefully, as the API server does with
// the termination finalizer on: it and its Node are marked deleted (which
// wakes the provisioner), and terminate drains the node before the
// instance goes.
func (s *Simulator) deleteClaim(nc *v1.NodeClaim, now time.Time) {
	if nc.DeletionTimestamp != nil {
		return
	}
	at := metav1.NewTime(now)
	nc.DeletionTimestamp = &at
	if node := s.world.nodeOf(nc); node != nil {
		node.DeletionTimestamp = &at
		effects.PatchNodeInto(node, effects.DisruptedTaint(node.Name, true))
		// The provisioner watches deleting nodes: their pods need places
		// before they are evicted (state.Build counts them pending).
		s.batch.trigger(now, false)
	}
	s.world.changed()
}

// terminate is the termination controller: each deleted NodeClaim's node
// is drained by the same plan (pkg/drain: PDBs through the eviction
// check, do-not-disrupt pods until the terminationGracePeriod deadline,
// DaemonSet pods last), then its instance is terminated. Evicted pods go
// at once: their own grace periods are not simulated.
func (s *Simulator) terminate(ctx context.Context) (bool, error) {
	now := s.clock.Now()
	changed := false
	s.drainWakes = s.drainWakes[:0]
	for _, nc := range s.world.sortedClaims() {
		if nc.DeletionTimestamp == nil {
			continue
		}
		if node := s.world.nodeOf(nc); node != nil {
			plan := drain.PlanDrain(s.world.podsOn(node.Name), now, drain.Deadline(nc))
			if !plan.Drained {
				for _, p := range plan.Evict {
					if drain.Evictable(p, s.world.namespacePDBs(p.Namespace)) != nil {
						continue
					}
					s.world.deletePod(p)
					changed = true
				}
				for _, d := range plan.Delete {
					s.world.deletePod(d.Pod)
					changed = true
				}
				if plan.RequeueAfter > 0 {
					s.drainWakes = append(s.drainWakes, now.Add(plan.RequeueAfter))
				}
				continue
			}
		}
		if err := cloudprovider.IgnoreNodeClaimNotFound(s.cloud.Delete(ctx, nc)); err != nil {
			return false, fmt.Errorf("terminating the instance of nodeclaim %s, %w", nc.Name, err)
		}
		s.removeClaim(nc, s.deletionReason(nc))
		changed = true
	}
	return changed, nil
}

// deletionReason names why a NodeClaim was deleted: the disruption
// reason recorded on it (Empty, Drifted, …), else its instance's last
// notice, else a plain deletion.
func (s *Simulator) deletionReason(nc *v1.NodeClaim) string {
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason); c != nil {
		return c.Reason
	}
	return s.rec.endReason(nc.Status.ProviderID, "Deleted")
}
