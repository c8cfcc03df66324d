package disruption

import (
	"fmt"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// CapacityBlockDrainLead is how long before the cloud starts reclaiming a
// capacity block's instances their nodes are drained: the reference's
// capacityreservation.expiration controller deletes them 10 minutes
// before EC2 begins reclaiming, when EC2's own expiration warning comes
// ("Monitor Capacity Blocks using EventBridge").
const CapacityBlockDrainLead = 10 * time.Minute

// BlockDrain is a NodeClaim to delete forcefully because its capacity
// block ends: the drain must finish by Deadline, when the cloud starts
// reclaiming the instance.
type BlockDrain struct {
	NodeClaim *v1.NodeClaim
	Deadline  time.Time
	Message   string
}

// CapacityBlockDrains are the NodeClaims (not yet deleted) launched into
// a capacity block whose reclaim is CapacityBlockDrainLead away or less
// at now, and when the next one will be (zero when none will). A
// forceful disruption: the caller records it (MarkForceful with reason
// Interrupted and the deadline) and deletes the NodeClaim, whatever
// budgets and do-not-disrupt say, as for an interruption notice.
func CapacityBlockDrains(claims []*v1.NodeClaim, blocks []cloudprovider.CapacityBlock, now time.Time) ([]BlockDrain, time.Time) {
	reclaim := map[string]time.Time{}
	for _, b := range blocks {
		if b.ID != "" && !b.Reclaim.IsZero() {
			reclaim[b.ID] = b.Reclaim
		}
	}
	var out []BlockDrain
	var wake time.Time
	for _, nc := range claims {
		at, ok := reclaim[nc.Labels[v1.LabelCapacityReservationID]]
		if !ok || nc.DeletionTimestamp != nil || nc.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeReserved {
			continue
		}
		drainAt := at.Add(-CapacityBlockDrainLead)
		if now.Before(drainAt) {
			if wake.IsZero() || drainAt.Before(wake) {
				wake = drainAt
			}
			continue
		}
		out = append(out, BlockDrain{NodeClaim: nc, Deadline: at,
			Message: fmt.Sprintf("capacity block %s is reclaimed from %s", nc.Labels[v1.LabelCapacityReservationID], at.UTC().Format(time.RFC3339))})
	}
	return out, wake
}
