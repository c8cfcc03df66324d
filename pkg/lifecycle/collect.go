package lifecycle

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Decision is what garbage collection removes.
type Decision struct {
	// Terminate are instances (as the cloud lists them) no NodeClaim owns.
	Terminate []*v1.NodeClaim
	// Delete are NodeClaims whose instance no longer exists.
	Delete []*v1.NodeClaim
}

// Collect compares the cloud's instances with the NodeClaims. An instance
// is leaked when no NodeClaim records its provider id and it launched more
// than grace ago (younger ones may be mid-launch). A NodeClaim that
// launched and is not being deleted is orphaned when the cloud no longer
// lists its instance.
func Collect(instances []*v1.NodeClaim, claims []v1.NodeClaim, now time.Time, grace time.Duration) Decision {
	owned := map[string]bool{}
	for _, nc := range claims {
		if nc.Status.ProviderID != "" {
			owned[nc.Status.ProviderID] = true
		}
	}
	running := map[string]bool{}
	var d Decision
	for _, inst := range instances {
		running[inst.Status.ProviderID] = true
		if !owned[inst.Status.ProviderID] && now.Sub(inst.CreationTimestamp.Time) > grace {
			d.Terminate = append(d.Terminate, inst)
		}
	}
	for i := range claims {
		nc := &claims[i]
		if nc.DeletionTimestamp != nil || nc.Status.ProviderID == "" || !meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeLaunched) {
			continue
		}
		if !running[nc.Status.ProviderID] {
			d.Delete = append(d.Delete, nc)
		}
	}
	return d
}
