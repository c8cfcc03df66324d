package explain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
)

// NodeInput is what explaining a node reads.
type NodeInput struct {
	NodeClaim *v1.NodeClaim
	// Disruption is the cluster as the disruption controller sees it
	// (disruption.NewInput over one snapshot's objects); nil when
	// unknown, and then the answer says so.
	Disruption *disruption.Input
	// Drift is the controller's Drift feature gate: it picks the methods
	// (disruption.Methods), as the controller does.
	Drift bool
	// SpotToSpot is the controller's SpotToSpotConsolidation gate.
	SpotToSpot bool
	// NodeRepair is the controller's NodeRepair gate and RepairPolicies
	// its cloud provider's (none offline, where they are not known).
	NodeRepair     bool
	RepairPolicies []cloudprovider.RepairPolicy
	// Offline: the snapshot has no instance types (no controller to
	// ask), so where a drifted node's pods would go is not known, nor is
	// the Drift gate.
	Offline bool
	Now     time.Time
}

// ForNode reports a NodeClaim (and its Node's name): where it is in its
// lifecycle, its conditions, why it is this instance (what the solver
// preferred and why it fell back), and why it is or is not being
// disrupted: its candidacy and blockers, drift, emptiness and the
// budgets, and what the disruption controller's own planning
// (disruption.Plan with the controller's methods) says of it now.
func ForNode(in NodeInput) Node {
	nc := in.NodeClaim
	out := Node{
		Node: nc.Status.NodeName, NodeClaim: nc.Name, NodePool: nc.Labels[v1.NodePoolLabelKey],
		InstanceType: nc.Labels[v1.LabelInstanceType], CapacityType: nc.Labels[v1.CapacityTypeLabelKey],
		Zone: nc.Labels[v1.LabelZone], ReservationID: nc.Labels[v1.LabelCapacityReservationID],
		Preferred: nc.Annotations[provisioning.PreferredAnnotationKey], Fallback: nc.Annotations[provisioning.FallbackAnnotationKey],
		Flavor: nc.Annotations[provisioning.FlavorAnnotationKey], Conditions: []Condition{},
	}
	for _, c := range nc.Status.Conditions {
		out.Conditions = append(out.Conditions, Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message, Since: c.LastTransitionTime.Time})
	}
	conds := nc.Status.Conditions
	switch {
	case nc.DeletionTimestamp != nil:
		out.Lifecycle = "Deleting"
	case !meta.IsStatusConditionTrue(conds, v1.ConditionTypeLaunched):
		out.Lifecycle = "Launching"
	case !meta.IsStatusConditionTrue(conds, v1.ConditionTypeRegistered):
		out.Lifecycle = "Registering"
	case !meta.IsStatusConditionTrue(conds, v1.ConditionTypeInitialized):
		out.Lifecycle = "Initializing"
	default:
		out.Lifecycle = "Ready"
	}
	out.Holds = holds(in, out.Node)
	explainDisruption(in, &out)
	out.Return = returnStatus(in, out)
	out.Repair = repairStatus(in, out)
	return out
}

// returnStatus says, for a node that fell back from a reservation or
// spot, or to a later
// ordered term, whether and when it returns (disruption.ReturnToPreferred,
// ReturnToPreferredTerm); "" for other nodes.
func returnStatus(in NodeInput, out Node) string {
	if in.Disruption == nil {
		return ""
	}
	var np *v1.NodePool
	for _, p := range in.Disruption.NodePools {
		if p.Name == in.NodeClaim.Labels[v1.NodePoolLabelKey] {
			np = p
		}
	}
	if np == nil {
		return ""
	}
	from := disruption.FallbackFrom(in.NodeClaim, np, in.Disruption.Snapshot.Input.InstanceTypes[np.Name])
	if len(from) == 0 {
		return termStatus(in, np, out)
	}
	to := disruption.CapacityNames(from)
	methods := methodsOf(in)
	returning := func(method string) bool { return disruption.Returns(methods, method, disruption.ReturnFallback) }
	policy, err := disruption.ReturnPolicyOf(np)
	switch {
	case err != nil:
		return "fell back from " + to + "; stays on-demand: " + err.Error()
	case !policy.Enabled:
		return fmt.Sprintf("fell back from %s; stays on-demand: its NodePool's %s is %s", to, v1.ReturnToPreferredAnnotationKey, v1.ReturnToPreferredDisabled)
	case returning(out.DisruptionMethod) && out.DisruptionStatus == DisruptionNext:
		return fmt.Sprintf("returning to %s: the next planning round starts it, a %s replacement first", to, to)
	case returning(out.DisruptionMethod):
		return fmt.Sprintf("returning to %s: its %s replacement launches before it drains", to, to)
	}
	for _, v := range out.DisruptionVerdicts {
		if returning(v.Method) {
			return "fell back from " + to + "; returns when it can: " + v.Message
		}
	}
	return fmt.Sprintf("fell back from %s; returns once %s has been available for %s and a %s replacement is cheaper", to, to, policy.After, to)
}

// termStatus says, for a node whose pods run on a later one of their
// ordered terms (llmaz flavors), whether and when it returns to an
// earlier one (disruption.ReturnToPreferredTerm); "" for other nodes.
func termStatus(in NodeInput, np *v1.NodePool, out Node) string {
	c, ok := candidate(*in.Disruption, in.NodeClaim.Name, in.Now)
	if !ok {
		return ""
	}
	later := disruption.LaterTerms(c.Node, c.Pods)
	if len(later) == 0 {
		return ""
	}
	f := later[0]
	from := fmt.Sprintf("pod %s/%s runs on term %d of %d of its required node affinity", f.Pod.Namespace, f.Pod.Name, f.Rank+1, f.Of)
	if in.NodeClaim.Annotations[provisioning.FlavorAnnotationKey] != "" {
		from += " (flavor " + in.NodeClaim.Annotations[provisioning.FlavorAnnotationKey] + ")"
	}
	methods := methodsOf(in)
	returning := func(method string) bool { return disruption.Returns(methods, method, disruption.ReturnLaterTerm) }
	policy, err := disruption.ReturnPolicyOf(np)
	switch {
	case err != nil:
		return from + "; stays: " + err.Error()
	case !policy.Terms:
		return fmt.Sprintf("%s; stays: returns to earlier terms only where its NodePool's %s is %s (they may cost more)", from, v1.ReturnToPreferredAnnotationKey, v1.ReturnToPreferredEnabled)
	case returning(out.DisruptionMethod) && out.DisruptionStatus == DisruptionNext:
		return from + "; returning to an earlier term: the next planning round starts it, a replacement first"
	case returning(out.DisruptionMethod):
		return from + "; returning to an earlier term: its replacement launches before it drains"
	}
	for _, v := range out.DisruptionVerdicts {
		if returning(v.Method) {
			return from + "; returns when it can: " + v.Message
		}
	}
	return fmt.Sprintf("%s; returns once an earlier term has been launchable for %s", from, policy.After)
}

// methodsOf are the controller's methods, by its gates.
func methodsOf(in NodeInput) []disruption.Method {
	g := disruption.Gates{Drift: driftGate(in), SpotToSpotConsolidation: in.SpotToSpot, NodeRepair: in.NodeRepair}
	return disruption.WithRepair(disruption.Methods(g), g, in.RepairPolicies)
}

// driftGate is the controller's Drift gate; offline it is taken to be on.
func driftGate(in NodeInput) bool { return in.Drift || in.Offline }

// explainDisruption fills in why the node is or is not being disrupted.
func explainDisruption(in NodeInput, out *Node) {
	nc := in.NodeClaim
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDrifted); c != nil && c.Status == "True" {
		out.Drifted = &Drifted{Reason: c.Reason, Message: c.Message, Since: c.LastTransitionTime.Time}
	}
	if at, ok := disruption.ExpiresAt(nc); ok {
		out.ExpiresAt = &at
	}
	reason := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason)
	if reason != nil && reason.Status != "True" {
		reason = nil
	}
	if reason != nil {
		out.DisruptionReason, out.DisruptionMethod = reason.Reason, reason.Message
	}
	if nc.DeletionTimestamp != nil {
		out.DisruptionStatus, out.Disruption = DisruptionDeleting, deleting("the NodeClaim", reason)
		return
	}
	if in.Disruption == nil {
		out.Disruption = "not known here: disruption needs the cluster's objects"
		out.Unknown = append(out.Unknown, "disruption: the cluster's objects were not read")
		return
	}
	dis := *in.Disruption
	cand, ok := candidate(dis, nc.Name, in.Now)
	if !ok {
		out.DisruptionStatus, out.Disruption = DisruptionNotCandidate, "not a disruption candidate: "+notCandidate(dis, nc)
		return
	}
	out.Candidate = true
	pods := len(cand.Pods)
	out.Pods = &pods
	np := cand.NodePool
	out.ConsolidateAfter = np.Spec.Disruption.ConsolidateAfter.String()
	at, consolidates := disruption.ConsolidatableAt(cand.NodeClaim, np)
	consolidates = consolidates && disruption.ConsolidationAllowed(np)
	if consolidates {
		out.ConsolidatableAt = &at
	}
	out.DisruptionsAllowed, _ = allowedNow(dis, np, methodsOf(in), in.Now)
	if in.Offline && out.Drifted != nil {
		out.Unknown = append(out.Unknown, "the Drift feature gate: the controller's (pass --controller-address); a Drifted condition is taken to mean it is on")
	}
	out.DisruptionBlockedBy = cand.Blocked
	what := describe(out, cand, in.Now)
	switch {
	case cand.Node.DeletionTimestamp != nil:
		out.DisruptionStatus, out.Disruption = DisruptionDeleting, deleting("its Node", reason)
		return
	case reason != nil:
		out.DisruptionStatus = DisruptionDisrupting
		out.Disruption = fmt.Sprintf("being disrupted (%s, by %s) since %s: tainted %s; it is deleted once any replacements have initialized",
			reason.Reason, reason.Message, stamp(reason.LastTransitionTime.Time), v1.DisruptedTaintKey)
		return
	case !slices.ContainsFunc(methodsOf(in), func(m disruption.Method) bool { return cand.BlockedFor(m) == "" }):
		out.DisruptionStatus = DisruptionBlocked
		out.Disruption = sentence(what, "disruption is blocked: "+cand.Blocked)
		return
	}
	gate := driftGate(in)
	d := disruption.Plan(dis, methodsOf(in), in.Now)
	out.ConsolidationScore = scoreOf(d, nc.Name)
	if d.Found && slices.Contains(d.Command.Names(), nc.Name) {
		out.DisruptionStatus = DisruptionNext
		out.DisruptionReason, out.DisruptionMethod = string(d.Command.Reason), d.Command.Method
		next := fmt.Sprintf("the next planning round disrupts it: %s (%s)", d.Command.Method, d.Command.Reason)
		if n := len(d.Command.Replacements); n > 0 {
			next += fmt.Sprintf(", launching %d replacement(s) first", n)
		}
		out.Disruption = sentence(what, next)
		return
	}
	var first disruption.Verdict
	for _, v := range d.Verdicts {
		if v.NodeClaim == nc.Name {
			if len(out.DisruptionVerdicts) == 0 {
				first = v
			}
			out.DisruptionVerdicts = append(out.DisruptionVerdicts, DisruptionVerdict{Method: v.Method, Event: v.Event, Message: v.Message})
		}
	}
	if len(out.DisruptionVerdicts) > 0 {
		v := out.DisruptionVerdicts[0]
		if in.Offline && first.Code == disruption.VerdictUnschedulable {
			// The verdict is the scheduling simulation's, and without
			// instance types no replacement fits anything, so it is not
			// the controller's.
			out.DisruptionVerdicts = nil
			out.Unknown = append(out.Unknown, "where a drifted node's pods would go: replacements need the cloud's instance types (pass --controller-address)")
			out.DisruptionStatus = DisruptionHeld
			out.Disruption = sentence(what, "whether its pods fit elsewhere is known to the controller")
			return
		}
		if in.Offline && first.Code.NeedsInstanceTypes() {
			// Consolidation's verdicts weigh prices and placements, which
			// only the controller's instance types tell.
			out.DisruptionVerdicts = nil
			out.Unknown = append(out.Unknown, "whether consolidation would move this node: prices and placements need the cloud's instance types (pass --controller-address)")
			out.DisruptionStatus = DisruptionHeld
			out.Disruption = sentence(what, "whether consolidation can delete or replace it is known to the controller")
			return
		}
		out.DisruptionStatus = DisruptionHeld
		out.Disruption = sentence(what, fmt.Sprintf("%s may not disrupt it now: %s", v.Method, v.Message))
		return
	}
	consolidatable := consolidates && !in.Now.Before(at)
	wanted := (out.Drifted != nil && gate) || (pods == 0 && consolidatable)
	switch {
	case wanted && d.Found:
		out.DisruptionStatus = DisruptionHeld
		out.Disruption = sentence(what, fmt.Sprintf("the next planning round disrupts %s first (%s, %s)",
			strings.Join(d.Command.Names(), ", "), d.Command.Method, d.Command.Reason))
	case wanted:
		// A method wanted it, found no command and said nothing: not
		// expected, but say what is known rather than guess.
		out.DisruptionStatus = DisruptionHeld
		out.Disruption = sentence(what, "no method disrupts it this round")
	case out.Drifted != nil:
		out.DisruptionStatus = DisruptionNone
		out.Disruption = sentence(what, "the Drift feature gate is off: drift does not replace it")
	case pods == 0 && consolidates:
		out.DisruptionStatus = DisruptionWaiting
		out.Disruption = what
	case pods == 0:
		out.DisruptionStatus = DisruptionNone
		out.Disruption = what
	case np.Spec.Disruption.ConsolidationPolicy == v1.ConsolidationPolicyWhenEmpty:
		out.DisruptionStatus = DisruptionNone
		out.Disruption = fmt.Sprintf("nothing to disrupt: it runs %d pod%s and its NodePool consolidates only empty nodes (consolidationPolicy: WhenEmpty)", pods, plural(pods))
	case consolidates && !consolidatable:
		out.DisruptionStatus = DisruptionWaiting
		out.Disruption = fmt.Sprintf("it runs %d pod%s; consolidation may consider it from %s (consolidateAfter)", pods, plural(pods), at.UTC().Format(time.RFC3339))
	default:
		out.DisruptionStatus = DisruptionNone
		out.Disruption = fmt.Sprintf("nothing to disrupt: it runs %d pod%s and no method disrupts it this round", pods, plural(pods))
	}
}

// describe is what disruption sees in the candidate: drifted, empty
// (and since or until when consolidatable), or busy.
func describe(out *Node, c disruption.Candidate, now time.Time) string {
	var parts []string
	if d := out.Drifted; d != nil {
		s := "drifted since " + stamp(d.Since) + " (" + d.Reason
		if d.Message != "" {
			s += ": " + d.Message
		}
		parts = append(parts, s+")")
	}
	switch at := out.ConsolidatableAt; {
	case len(c.Pods) > 0:
		if len(parts) > 0 {
			parts = append(parts, fmt.Sprintf("it runs %d pod%s", len(c.Pods), plural(len(c.Pods))))
		}
	case !disruption.ConsolidationAllowed(c.NodePool):
		parts = append(parts, "empty, but a static NodePool keeps its replicas: never consolidated")
	case at == nil:
		parts = append(parts, "empty, but consolidateAfter: Never keeps empty nodes")
	case now.Before(*at):
		since := "the last pod event"
		if c.NodeClaim.Status.LastPodEventTime.IsZero() {
			since = "it initialized"
		}
		parts = append(parts, fmt.Sprintf("empty; consolidatable at %s (consolidateAfter %s after %s)", stamp(*at), out.ConsolidateAfter, since))
	default:
		parts = append(parts, "empty and consolidatable since "+stamp(*at))
	}
	return strings.Join(parts, "; ")
}

// sentence joins what a node is and what disruption does with it.
func sentence(what, verdict string) string {
	if what == "" {
		return verdict
	}
	return what + "; " + verdict
}

// deleting says a node is going, and why when disruption chose it.
func deleting(what string, reason *metav1.Condition) string {
	if reason == nil {
		return what + " is being deleted (no disruption reason recorded: deleted by hand, interrupted, expired or unhealthy)"
	}
	return fmt.Sprintf("%s is being deleted: disrupted (%s, by %s)", what, reason.Reason, reason.Message)
}

// candidate is the candidate for the NodeClaim named name.
func candidate(in disruption.Input, name string, now time.Time) (disruption.Candidate, bool) {
	for _, c := range disruption.Candidates(in, now) {
		if c.NodeClaim.Name == name {
			return c, true
		}
	}
	return disruption.Candidate{}, false
}

// notCandidate says why disruption does not consider nc.
func notCandidate(in disruption.Input, nc *v1.NodeClaim) string {
	pool := nc.Labels[v1.NodePoolLabelKey]
	if pool == "" {
		return "no NodePool owns it"
	}
	if !slices.ContainsFunc(in.NodePools, func(np *v1.NodePool) bool { return np.Name == pool }) {
		return fmt.Sprintf("its NodePool %s is gone or being deleted", pool)
	}
	if nc.Status.NodeName == "" {
		return "its Node has not registered yet"
	}
	if !slices.ContainsFunc(in.NodeClaims, func(c *v1.NodeClaim) bool { return c.Name == nc.Name }) {
		return "the NodeClaim is not in the controller's view yet; ask again in a few seconds"
	}
	return fmt.Sprintf("its Node %s is not in the cluster", nc.Status.NodeName)
}

// allowedNow is how many more of np's nodes each reason methods disrupt
// for may disrupt now (disruption.AllowedByPool over the NodePool's
// nodes), and how many of its registered nodes are disrupting.
func allowedNow(in disruption.Input, np *v1.NodePool, methods []disruption.Method, now time.Time) (map[string]int, int) {
	in.NodePools = []*v1.NodePool{np}
	out := map[string]int{}
	for _, r := range disruption.BudgetReasons(methods) {
		out[string(r)] = disruption.AllowedByPool(in, r, now)[np.Name]
	}
	return out, disruptingNodes(in, np.Name)
}

// disruptingNodes counts a NodePool's NodeClaims with a Node being
// deleted or NotReady, as disruption.AllowedByPool counts them.
func disruptingNodes(in disruption.Input, pool string) int {
	nodes := map[string]*corev1.Node{}
	for _, n := range in.Nodes {
		nodes[n.Name] = n
	}
	disrupting := 0
	for _, nc := range in.NodeClaims {
		node := nodes[nc.Status.NodeName]
		if node == nil || nc.Labels[v1.NodePoolLabelKey] != pool {
			continue
		}
		if nc.DeletionTimestamp != nil || node.DeletionTimestamp != nil || !nodeReady(node) {
			disrupting++
		}
	}
	return disrupting
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// scoreOf is the last score the planning round gave a move of the
// NodeClaim named name (single-node consolidation weighs each node after
// multi-node consolidation weighed them together); nil when none did.
func scoreOf(d disruption.Decision, name string) *disruption.MoveScore {
	for i := len(d.Scores) - 1; i >= 0; i-- {
		if slices.Contains(d.Scores[i].NodeClaims, name) {
			s := d.Scores[i]
			return &s
		}
	}
	return nil
}

// holds counts the virtual pods disruption places on the node, by the
// object they hold capacity for.
func holds(in NodeInput, node string) []Held {
	if in.Disruption == nil || node == "" {
		return nil
	}
	var out []Held
	for _, p := range in.Disruption.Virtual {
		if p.Spec.NodeName != node {
			continue
		}
		owner := p.Annotations[state.VirtualPodAnnotationKey]
		if i := slices.IndexFunc(out, func(h Held) bool { return h.For == owner }); i >= 0 {
			out[i].Pods++
		} else {
			out = append(out, Held{For: owner, Pods: 1})
		}
	}
	slices.SortFunc(out, func(a, b Held) int { return strings.Compare(a.For, b.For) })
	return out
}
