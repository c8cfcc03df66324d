package explain

import (
	"fmt"
	"time"

	"github.com/capstan-dev/capstan/pkg/disruption"
)

// repairStatus says, for a node a repair policy finds unhealthy, whether
// and when it is repaired (disruption.Repair: its toleration, its
// NodePool's repair budget and breaker); "" for healthy nodes and where
// the policies are not known (offline).
func repairStatus(in NodeInput, out Node) string {
	if in.Disruption == nil || len(in.RepairPolicies) == 0 {
		return ""
	}
	c, ok := candidate(*in.Disruption, in.NodeClaim.Name, in.Now)
	if !ok {
		return ""
	}
	r := disruption.Repair{Policies: in.RepairPolicies}
	st := r.RepairStateOf(c, disruption.Candidates(*in.Disruption, in.Now), in.Now)
	if !st.Unhealthy {
		return ""
	}
	u := st.Unhealth
	unhealthy := fmt.Sprintf("unhealthy: %s %s since %s", u.Condition, u.Status, u.Since.UTC().Format(time.RFC3339))
	switch {
	case !in.NodeRepair:
		return unhealthy + "; not repaired: the NodeRepair feature gate is off"
	case out.DisruptionMethod == r.Name() && out.DisruptionStatus == DisruptionNext:
		return unhealthy + "; due: the next planning round repairs it, a replacement first"
	case out.DisruptionMethod == r.Name():
		return unhealthy + "; being repaired: its replacement launches before it drains"
	case in.Now.Before(u.Due):
		return fmt.Sprintf("%s; tolerated until %s, then repaired within its NodePool's repair budget", unhealthy, u.Due.UTC().Format(time.RFC3339))
	case st.Verdict.Message != "":
		return unhealthy + "; not repaired: " + st.Verdict.Message
	}
	return unhealthy + "; due: the next planning round repairs it, a replacement first"
}
