package explain

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// WritePod writes a pod's explanation for people.
func WritePod(w io.Writer, p Pod) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Pod %s\n", p.Pod)
	considered := "not considered"
	if p.Considered {
		considered = "considered"
	}
	fmt.Fprintf(&b, "  %s: %s\n", considered, p.Consideration)
	if p.Next != "" {
		fmt.Fprintf(&b, "  next provisioning: %s\n", p.Next)
	}
	if p.LastEvent != "" {
		fmt.Fprintf(&b, "  last reported: %s\n", p.LastEvent)
	}
	for _, v := range p.NodePools {
		switch {
		case v.Compatible:
			fmt.Fprintf(&b, "  NodePool %s: compatible; cheapest: %s\n", v.NodePool, describeOptions(v.Cheapest))
		case v.Reason != "":
			fmt.Fprintf(&b, "  NodePool %s: %s: %s\n", v.NodePool, v.Reason, v.Message)
		default:
			fmt.Fprintf(&b, "  NodePool %s: no reason known to rule it out\n", v.NodePool)
		}
		writeLimits(&b, "    ", v.Limits)
		for _, m := range v.Unavailable {
			fmt.Fprintf(&b, "    unavailable: %s (%s) until %s\n", m.Offering, m.Reason, m.Until.UTC().Format(time.RFC3339))
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
	fmt.Fprintf(&b, "NodePool %s\n", np.NodePool)
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
	fmt.Fprintf(&b, "  nodes: %s\n", strings.Join(nodes, ", "))
	if np.CostPerHour != nil {
		fmt.Fprintf(&b, "  cost: %.4f per hour\n", *np.CostPerHour)
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
		line := fmt.Sprintf("  budget %s nodes (%s): %s", bu.Nodes, scope, state)
		if bu.Schedule != "" {
			line += fmt.Sprintf(", schedule %q for %s", bu.Schedule, bu.Duration)
		}
		if !bu.Change.IsZero() {
			verb := "opens"
			if bu.Active {
				verb = "closes"
			}
			line += fmt.Sprintf("; %s %s (%s %s)", verb, bu.Change.UTC().Format("2006-01-02 15:04 MST"), bu.Change.In(loc).Format("2006-01-02 15:04"), np.TimeZone)
		}
		b.WriteString(line + "\n")
	}
	if np.DisruptionsAllowed != nil {
		fmt.Fprintf(&b, "  disruptions allowed now: %s; disrupting: %d node%s (being deleted or NotReady)\n",
			describeAllowed(np.DisruptionsAllowed), np.Disrupting, plural(np.Disrupting))
	}
	writeUnknown(&b, np.Unknown)
	_, err = io.WriteString(w, b.String())
	return err
}

// WriteNode writes a node's explanation for people.
func WriteNode(w io.Writer, n Node) error {
	var b strings.Builder
	fmt.Fprintf(&b, "NodeClaim %s (node %s, NodePool %s): %s\n", n.NodeClaim, orNone(n.Node), n.NodePool, n.Lifecycle)
	if n.InstanceType != "" {
		fmt.Fprintf(&b, "  instance: %s, %s, %s", n.InstanceType, n.CapacityType, n.Zone)
		if n.ReservationID != "" {
			fmt.Fprintf(&b, ", reservation %s", n.ReservationID)
		}
		b.WriteString("\n")
	}
	if n.Preferred != "" {
		fmt.Fprintf(&b, "  preferred: %s\n", n.Preferred)
	}
	if n.Fallback != "" {
		fmt.Fprintf(&b, "  fallback: %s\n", n.Fallback)
	}
	if n.Flavor != "" {
		fmt.Fprintf(&b, "  flavor: %s\n", n.Flavor)
	}
	if n.Return != "" {
		fmt.Fprintf(&b, "  return: %s\n", n.Return)
	}
	for _, c := range n.Conditions {
		fmt.Fprintf(&b, "  %s=%s since %s %s %s\n", c.Type, c.Status, c.Since.UTC().Format(time.RFC3339), c.Reason, c.Message)
	}
	if n.ExpiresAt != nil {
		fmt.Fprintf(&b, "  expires: %s (expireAfter), whatever budgets and do-not-disrupt say\n", n.ExpiresAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "  disruption: %s\n", n.Disruption)
	// The sentence carries the first verdict; the others follow.
	for i, v := range n.DisruptionVerdicts {
		if i > 0 {
			fmt.Fprintf(&b, "    also %s: %s\n", v.Method, v.Message)
		}
	}
	if n.DisruptionsAllowed != nil {
		fmt.Fprintf(&b, "  disruptions allowed now in NodePool %s: %s\n", n.NodePool, describeAllowed(n.DisruptionsAllowed))
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

func writeLimits(b *strings.Builder, indent string, limits []Limit) {
	for _, l := range limits {
		fmt.Fprintf(b, "%slimit %s: %s used of %s\n", indent, l.Resource, l.Used, l.Limit)
	}
}

func writeUnknown(b *strings.Builder, unknown []string) {
	for _, u := range unknown {
		fmt.Fprintf(b, "  not known here: %s\n", u)
	}
}

func orNone(s string) string {
	if s == "" {
		return "none yet"
	}
	return s
}
