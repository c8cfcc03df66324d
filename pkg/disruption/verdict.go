package disruption

import "fmt"

// Event reasons a Verdict is reported under: consolidation methods say a
// node is Unconsolidatable, the others that its disruption is blocked.
const (
	EventUnconsolidatable  = "Unconsolidatable"
	EventDisruptionBlocked = "DisruptionBlocked"
)

// VerdictCode says what kind of thing holds a node, so readers
// (explain, metrics) branch on it and never on a verdict's message.
type VerdictCode string

const (
	// VerdictBlocked: a pod or the node itself blocks disruption
	// (do-not-disrupt, a PodDisruptionBudget, a nomination).
	VerdictBlocked VerdictCode = "Blocked"
	// VerdictBudget: the NodePool's budget allows no more disruptions
	// for the method's reason now.
	VerdictBudget VerdictCode = "Budget"
	// VerdictUnpriced: the node's price is not known, so no replacement
	// can be shown to be cheaper.
	VerdictUnpriced VerdictCode = "Unpriced"
	// VerdictUnschedulable: a pod would not schedule without the node
	// (a scheduling simulation over the cloud's instance types).
	VerdictUnschedulable VerdictCode = "Unschedulable"
	// VerdictUnconsolidatable: consolidation's simulation found no
	// cheaper placement for the node's pods.
	VerdictUnconsolidatable VerdictCode = "Unconsolidatable"
	// VerdictBelowThreshold: under consolidationPolicy Balanced, the
	// move's score does not reach the NodePool's threshold.
	VerdictBelowThreshold VerdictCode = "BelowThreshold"
	// VerdictInvalidThreshold: the NodePool's
	// capstan.dev/consolidation-threshold is not a threshold, so its
	// moves cannot be scored.
	VerdictInvalidThreshold VerdictCode = "InvalidThreshold"
	// VerdictReturnWaits: a return to preferred capacity waits (the
	// preferred offering is unavailable, not settled, or not cheaper).
	VerdictReturnWaits VerdictCode = "ReturnWaits"
	// VerdictGang: a pod on the node belongs to a gang that runs on other
	// nodes too; a gang is moved only as a whole.
	VerdictGang VerdictCode = "Gang"
)

// NeedsInstanceTypes reports whether a verdict of this code weighs the
// cloud's instance types (placements, prices): without them, as explain
// runs offline, such a verdict is not the controller's.
func (c VerdictCode) NeedsInstanceTypes() bool {
	switch c {
	case VerdictUnpriced, VerdictUnschedulable, VerdictUnconsolidatable, VerdictBelowThreshold:
		return true
	}
	return false
}

// Verdict is a node a method would disrupt but may not now, and why, in
// the reference's words; Code says the kind of why.
type Verdict struct {
	NodeClaim string
	Node      string
	Method    string
	Event     string
	Code      VerdictCode
	Message   string
	// InvalidDoNotDisrupt is the pod holding the node with an invalid
	// do-not-disrupt value, which its own Warning event reports.
	InvalidDoNotDisrupt *InvalidDoNotDisrupt
}

// InvalidDoNotDisrupt names a pod whose karpenter.sh/do-not-disrupt value
// is invalid, and why (state.DoNotDisruptOf).
type InvalidDoNotDisrupt struct {
	Namespace, Name, Message string
}

// admit screens a candidate method m wants: one being deleted is not
// counted; a blocked one, or one whose NodePool's budget allows nothing
// now, is counted as eligible and gets its verdict (reported under
// event) but is not admitted.
func (out *Outcome) admit(c Candidate, m Method, event string, env Env) bool {
	if c.Blocked == blockedDeleting {
		return false
	}
	out.Eligible++
	switch blocked := c.BlockedFor(m); {
	case blocked != "":
		if reportable(c) {
			code := VerdictBlocked
			if c.GangHeld {
				code = VerdictGang
			}
			v := verdict(c, m, event, code, blocked)
			if h := c.Hold; h != nil && h.Invalid != "" {
				v.InvalidDoNotDisrupt = &InvalidDoNotDisrupt{Namespace: h.Pod.Namespace, Name: h.Pod.Name, Message: h.Invalid}
			}
			out.Verdicts = append(out.Verdicts, v)
		}
		if c.Hold != nil {
			out.wake(c.Hold.Until, env.Now)
		}
		return false
	case env.Allowed[c.NodePool.Name] == 0:
		out.Verdicts = append(out.Verdicts, budgetVerdict(c, m, event))
		return false
	}
	return true
}

// budgetVerdict is the verdict for a node its NodePool's budget holds.
func budgetVerdict(c Candidate, m Method, event string) Verdict {
	return verdict(c, m, event, VerdictBudget, fmt.Sprintf("disruption budget of 0 for %s", m.Reason()))
}

func verdict(c Candidate, m Method, event string, code VerdictCode, msg string) Verdict {
	return Verdict{NodeClaim: c.NodeClaim.Name, Node: c.Node.Name, Method: m.Name(), Event: event, Code: code, Message: msg}
}
