package simulator

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/printable"
)

// isKeyEvent picks the events the text summary lists: failures,
// interruptions, scaling, disruption, deletions and the manifests'
// timed changes. Unconsolidatable verdicts (every node that cannot be
// consolidated, every five minutes) are left to -o json.
// Pods' reasons and launches are summarized in tables instead.
func isKeyEvent(kind string) bool {
	switch kind {
	case "InsufficientCapacity", "LaunchFailed", "LaunchTimeout", "SpotServiceLinkedRoleCreationFailed", "RegistrationTimeout", "AtomicGroupReleased", "Scaled", "NodeDeleted", "InstanceStopped", "Applied", "Deleted",
		"DisruptionLaunching", "DisruptionTerminating", "DisruptionBlocked", "CapacityReservationEnded":
		return true
	}
	switch cloudprovider.InterruptionKind(kind) {
	case cloudprovider.SpotInterruption, cloudprovider.RebalanceRecommendation, cloudprovider.ScheduledChange,
		cloudprovider.InstanceStopping, cloudprovider.InstanceTerminating, cloudprovider.SpotPriceAboveMax,
		cloudprovider.PreemptibleMaxLifetime, cloudprovider.AzureEviction:
		return true
	}
	return false
}

// maxTextRows bounds each list in the text summary; -o json has all.
const maxTextRows = 20

// WriteText writes the concise summary `capstan simulate` prints by
// default: nodes at the end grouped by pool, type, zone and capacity
// type with their cost, pending pods with their reasons, key events.
func WriteText(w io.Writer, r *Result) error {
	var b strings.Builder
	s := r.Summary
	fmt.Fprintf(&b, "Simulated %s: %d node(s) launched, %d at the end (%d spot, %d on-demand, %d reserved), %d pod(s) pending.\n",
		s.Duration, s.NodesLaunched, s.NodesAtEnd, s.ByCapacityType["spot"], s.ByCapacityType["on-demand"], s.ByCapacityType["reserved"], s.PodsPending)
	fmt.Fprintf(&b, "Cost: %.4f per hour at the end, %.4f in total.\n", s.CostPerHourAtEnd, s.TotalCost)
	if groups := nodeGroups(r.Nodes); len(groups) > 0 {
		b.WriteString("\nNodes at the end:\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NODEPOOL\tINSTANCE TYPE\tZONE\tCAPACITY TYPE\tNODES\tPRICE/H EACH\tPODS")
		for _, g := range groups {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%.4f\t%d\n", printable.Line(g.NodePool), printable.Line(g.InstanceType), printable.Line(g.Zone), printable.Line(g.CapacityType), g.count, g.PricePerHour, g.pods)
		}
		_ = tw.Flush()
	}
	var pending, key []string
	for _, p := range r.Pods {
		if p.Node == "" {
			pending = append(pending, fmt.Sprintf("  %s  %s", p.Name, p.PendingReason))
		}
	}
	for _, e := range r.Events {
		if isKeyEvent(e.Kind) {
			key = append(key, fmt.Sprintf("  %8s  %s  %s  %s", e.At, e.Kind, e.Object, e.Message))
		}
	}
	var warnings []string
	for _, w := range r.Warnings {
		warnings = append(warnings, "  "+w.Message)
	}
	writeRows(&b, "Warnings (the controller reports these on the NodePool's ValidationSucceeded condition)", warnings)
	writeRows(&b, "Pending pods", pending)
	writeRows(&b, "Key events", key)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRows writes a titled list of at most maxTextRows rows, each on its
// own line with what does not print escaped: rows carry names and
// messages from the manifests and the cloud profile, which a terminal
// would otherwise obey.
func writeRows(b *strings.Builder, title string, rows []string) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s:\n", title)
	for i, row := range rows {
		if i == maxTextRows {
			fmt.Fprintf(b, "  … and %d more (-o json lists them all)\n", len(rows)-i)
			break
		}
		b.WriteString(printable.Line(row) + "\n")
	}
}

type nodeGroup struct {
	Node
	count, pods int
}

// nodeGroups groups the nodes at the end by what they are.
func nodeGroups(nodes []Node) []nodeGroup {
	byKey := map[string]*nodeGroup{}
	var out []*nodeGroup
	for _, n := range nodes {
		if n.DeletedAt != "" {
			continue
		}
		key := strings.Join([]string{n.NodePool, n.InstanceType, n.Zone, n.CapacityType, n.ReservationID}, "/")
		g := byKey[key]
		if g == nil {
			g = &nodeGroup{Node: n}
			byKey[key] = g
			out = append(out, g)
		}
		g.count++
		g.pods += len(n.Pods)
	}
	slices.SortFunc(out, func(a, b *nodeGroup) int {
		return cmp.Or(cmp.Compare(a.NodePool, b.NodePool), cmp.Compare(a.InstanceType, b.InstanceType), cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.CapacityType, b.CapacityType))
	})
	res := make([]nodeGroup, len(out))
	for i, g := range out {
		res[i] = *g
	}
	return res
}
