package explain

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/printable"
)

// WritePod writes a pod's explanation for people.
func WritePod(w io.Writer, p Pod) error {
	var b strings.Builder
	line(&b, "Pod %s", p.Pod)
	considered := "not considered"
	if p.Considered {
		considered = "considered"
	}
	line(&b, "  %s: %s", considered, p.Consideration)
	if p.Next != "" {
		line(&b, "  next provisioning: %s", p.Next)
	}
	for _, f := range p.Flavors {
		line(&b, "  %s", describeFlavor(f))
	}
	if p.LastEvent != "" {
		line(&b, "  last reported: %s", p.LastEvent)
	}
	for _, v := range p.NodePools {
		switch {
		case v.Compatible:
			line(&b, "  NodePool %s: compatible; cheapest: %s", v.NodePool, describeOptions(v.Cheapest))
		case v.Reason != "":
			line(&b, "  NodePool %s: %s: %s", v.NodePool, v.Reason, v.Message)
		default:
			line(&b, "  NodePool %s: no reason known to rule it out", v.NodePool)
		}
		writeLimits(&b, "    ", v.Limits)
		for _, m := range v.Unavailable {
			line(&b, "    unavailable: %s (%s) until %s", m.Offering, m.Reason, m.Until.UTC().Format(time.RFC3339))
		}
	}
	writeUnknown(&b, p.Unknown)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteNodePool writes a NodePool's explanation for people; budget times
// are given in UTC and in the budgets' zone.
func WriteNodePool(w io.Writer, np NodePool) error {
	var b strings.Builder
	line(&b, "NodePool %s", np.NodePool)
	if len(np.Limits) == 0 {
		b.WriteString("  limits: none\n")
	}
	writeLimits(&b, "  ", np.Limits)
	var nodes []string
	for _, ct := range slices.Sorted(maps.Keys(np.Nodes)) {
		nodes = append(nodes, fmt.Sprintf("%d %s", np.Nodes[ct], ct))
	}
	if len(nodes) == 0 {
		nodes = []string{"none"}
	}
	line(&b, "  nodes: %s", strings.Join(nodes, ", "))
	if np.CostPerHour != nil {
		line(&b, "  cost: %.4f per hour", *np.CostPerHour)
	}
	loc, err := time.LoadLocation(np.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	for _, bu := range np.Budgets {
		scope := "all reasons"
		if len(bu.Reasons) > 0 {
			scope = strings.Join(bu.Reasons, ", ")
		}
		state := "in force"
		if !bu.Active {
			state = "not in force"
		}
		budget := fmt.Sprintf("%s nodes (%s): %s", bu.Nodes, scope, state)
		if bu.Schedule != "" {
			budget += fmt.Sprintf(", schedule %q for %s", bu.Schedule, bu.Duration)
		}
		if !bu.Change.IsZero() {
			verb := "opens"
			if bu.Active {
				verb = "closes"
			}
			budget += fmt.Sprintf("; %s %s (%s %s)", verb, bu.Change.UTC().Format("2006-01-02 15:04 MST"), bu.Change.In(loc).Format("2006-01-02 15:04"), np.TimeZone)
		}
		line(&b, "  budget %s", budget)
	}
	if np.DisruptionsAllowed != nil {
		line(&b, "  disruptions allowed now: %s; disrupting: %d node%s (being deleted or NotReady)",
			describeAllowed(np.DisruptionsAllowed), np.Disrupting, plural(np.Disrupting))
	}
	writeUnknown(&b, np.Unknown)
	_, err = io.WriteString(w, b.String())
	return err
}

// WriteNode writes a node's explanation for people.
func WriteNode(w io.Writer, n Node) error {
	var b strings.Builder
	line(&b, "NodeClaim %s (node %s, NodePool %s): %s", n.NodeClaim, orNone(n.Node), n.NodePool, n.Lifecycle)
	if n.InstanceType != "" {
		instance := fmt.Sprintf("%s, %s, %s", n.InstanceType, n.CapacityType, n.Zone)
		if n.ReservationID != "" {
			instance += ", reservation " + n.ReservationID
		}
		line(&b, "  instance: %s", instance)
	}
	if n.Preferred != "" {
		line(&b, "  preferred: %s", n.Preferred)
	}
	if n.Fallback != "" {
		line(&b, "  fallback: %s", n.Fallback)
	}
	for _, h := range n.Holds {
		line(&b, "  holds capacity for: %s (%d virtual pods)", h.For, h.Pods)
	}
	if n.Flavor != "" {
		line(&b, "  flavor: %s", n.Flavor)
	}
	if n.Return != "" {
		line(&b, "  return: %s", n.Return)
	}
	if n.Repair != "" {
		line(&b, "  repair: %s", n.Repair)
	}
	for _, c := range n.Conditions {
		line(&b, "  %s=%s since %s %s %s", c.Type, c.Status, c.Since.UTC().Format(time.RFC3339), c.Reason, c.Message)
	}
	if n.ExpiresAt != nil {
		line(&b, "  expires: %s (expireAfter), whatever budgets and do-not-disrupt say", n.ExpiresAt.UTC().Format(time.RFC3339))
	}
	line(&b, "  disruption: %s", n.Disruption)
	// The sentence carries the first verdict; the others follow.
	for i, v := range n.DisruptionVerdicts {
		if i > 0 {
			line(&b, "    also %s: %s", v.Method, v.Message)
		}
	}
	if s := n.ConsolidationScore; s != nil {
		line(&b, "  consolidation score (%s, %s): %s", s.Method, s.Event(), s.Message())
	}
	if n.DisruptionsAllowed != nil {
		line(&b, "  disruptions allowed now in NodePool %s: %s", n.NodePool, describeAllowed(n.DisruptionsAllowed))
	}
	writeUnknown(&b, n.Unknown)
	_, err := io.WriteString(w, b.String())
	return err
}

// reasonOrder is the order answers list the reasons budgets are counted
// for in (docs/explain.md); which reasons there are is the methods'
// (disruption.BudgetReasons), and one not here follows, sorted.
var reasonOrder = []v1.DisruptionReason{v1.DisruptionReasonEmpty, v1.DisruptionReasonDrifted, v1.DisruptionReasonUnderutilized}

// describeAllowed lists the disruptions each reason allows, in
// reasonOrder, then any other.
func describeAllowed(allowed map[string]int) string {
	var parts []string
	for _, r := range reasonOrder {
		if n, ok := allowed[string(r)]; ok {
			parts = append(parts, fmt.Sprintf("%s %d", r, n))
		}
	}
	for _, r := range slices.Sorted(maps.Keys(allowed)) {
		if !slices.ContainsFunc(reasonOrder, func(k v1.DisruptionReason) bool { return string(k) == r }) {
			parts = append(parts, fmt.Sprintf("%s %d", r, allowed[r]))
		}
	}
	return strings.Join(parts, ", ")
}

// line writes one line of text, escaping whatever in it does not print,
// newlines included: its values come from cluster objects anyone may
// write (Events, conditions) or from the controller's answer, and a
// terminal obeys the control sequences in them.
func line(b *strings.Builder, format string, args ...any) {
	b.WriteString(printable.Line(fmt.Sprintf(format, args...)))
	b.WriteByte('\n')
}

func writeLimits(b *strings.Builder, indent string, limits []Limit) {
	for _, l := range limits {
		line(b, "%slimit %s: %s used of %s", indent, l.Resource, l.Used, l.Limit)
	}
}

func writeUnknown(b *strings.Builder, unknown []string) {
	for _, u := range unknown {
		line(b, "  not known here: %s", u)
	}
}

func orNone(s string) string {
	if s == "" {
		return "none yet"
	}
	return s
}
