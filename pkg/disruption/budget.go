package disruption

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/budgets"
)

// Allowed is how many more of np's nodes reason may disrupt at now, given
// total nodes of which disrupting are already being deleted or NotReady:
// the minimum over the budgets in force that list reason or list none,
// each ceil(total × pct) or N, less disrupting, never below 0 (seed 004).
// With no budget in force for the reason, every node may go.
func Allowed(np *v1.NodePool, reason v1.DisruptionReason, total, disrupting int, now time.Time) (int, error) {
	statuses, _, err := budgets.Evaluate(np, now)
	if err != nil {
		return 0, err
	}
	allowed := math.MaxInt
	for _, s := range statuses {
		if !s.Active || !applies(s.Reasons, reason) {
			continue
		}
		n, err := budgetNodes(s.Nodes, total)
		if err != nil {
			return 0, fmt.Errorf("nodepool %s: %w", np.Name, err)
		}
		allowed = min(allowed, max(0, n-disrupting))
	}
	if allowed == math.MaxInt {
		return max(0, total-disrupting), nil
	}
	return allowed, nil
}

func applies(reasons []string, reason v1.DisruptionReason) bool {
	if len(reasons) == 0 {
		return true
	}
	for _, r := range reasons {
		if r == string(reason) {
			return true
		}
	}
	return false
}

// budgetNodes is a budget's nodes value for total nodes: a count, or a
// percentage rounded up.
func budgetNodes(nodes string, total int) (int, error) {
	if pct, ok := strings.CutSuffix(nodes, "%"); ok {
		p, err := strconv.Atoi(pct)
		if err != nil || p < 0 || p > 100 {
			return 0, fmt.Errorf("budget nodes %q is not a percentage", nodes)
		}
		return (total*p + 99) / 100, nil
	}
	n, err := strconv.Atoi(nodes)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("budget nodes %q is not a count", nodes)
	}
	return n, nil
}
