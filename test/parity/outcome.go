package parity

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/simulator"
	"github.com/capstan-dev/capstan/test/invariants"
)

// ReasonDeleted is a deletion without a disruption reason (a NodeClaim or
// its NodePool deleted), as simulate's deletionReason spells it.
const ReasonDeleted = "Deleted"

// Outcome is a run reduced to what parity compares. Lists are sorted, so
// two outcomes compare with ==-like equality (cmp.Diff).
type Outcome struct {
	// Nodes are the launched NodeClaims not deleted at the end, as
	// "instance-type/zone/capacity-type", with "/reservation-id" in a
	// reservation.
	Nodes []string
	// Deletions are the launched NodeClaims deleted, as a node of Nodes
	// then ": reason" (the DisruptionReason, ReasonDeleted without one).
	Deletions []string
	// Running counts the pods running at the end.
	Running int
}

// String shows an outcome in a failure.
func (o Outcome) String() string {
	return fmt.Sprintf("nodes %v; deletions %v; running %d", o.Nodes, o.Deletions, o.Running)
}

// node is the compared shape of a node.
func node(instanceType, zone, capacityType, reservation string) string {
	out := instanceType + "/" + zone + "/" + capacityType
	if reservation != "" {
		out += "/" + reservation
	}
	return out
}

// FromResult is simulate's outcome for nodePool's nodes and every pod
// (simulate runs one scenario's manifests).
func FromResult(r *simulator.Result, nodePool string) Outcome {
	out := Outcome{Nodes: []string{}, Deletions: []string{}}
	for _, n := range r.Nodes {
		if n.NodePool != nodePool {
			continue
		}
		shape := node(n.InstanceType, n.Zone, n.CapacityType, n.ReservationID)
		if n.DeletedAt == "" {
			out.Nodes = append(out.Nodes, shape)
			continue
		}
		out.Deletions = append(out.Deletions, shape+": "+n.DeletionReason)
	}
	for _, p := range r.Pods {
		if p.Node != "" {
			out.Running++
		}
	}
	return out.sorted()
}

// FromClaims is the cluster's outcome: claims are every NodeClaim of the
// NodePool seen during the scenario, each as last seen (deleted ones
// included), gone the names of those deleted from the API server, and
// running the pods Running at the end. A NodeClaim that never launched
// (no provider id: its launch failed) is not a node.
func FromClaims(claims []*v1.NodeClaim, gone map[string]bool, running int) Outcome {
	out := Outcome{Nodes: []string{}, Deletions: []string{}, Running: running}
	for _, nc := range claims {
		if nc.Status.ProviderID == "" {
			continue
		}
		shape := node(nc.Labels[v1.LabelInstanceType], nc.Labels[v1.LabelZone], nc.Labels[v1.CapacityTypeLabelKey], nc.Labels[v1.LabelCapacityReservationID])
		if nc.DeletionTimestamp == nil && !gone[nc.Name] {
			out.Nodes = append(out.Nodes, shape)
			continue
		}
		reason := ReasonDeleted
		if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason); c != nil && c.Status == metav1.ConditionTrue {
			reason = c.Reason
		}
		out.Deletions = append(out.Deletions, shape+": "+reason)
	}
	return out.sorted()
}

// FromChecker is the cluster's outcome from what an invariants checker
// watching the scenario saw of its NodePool's NodeClaims, and running.
func FromChecker(c *invariants.Checker, running int) Outcome {
	var claims []*v1.NodeClaim
	seen, gone := map[string]bool{}, map[string]bool{}
	for _, e := range c.History() {
		if !seen[e.Name] {
			seen[e.Name] = true
			claims = append(claims, c.Last(e.Name))
		}
		gone[e.Name] = gone[e.Name] || e.Kind == invariants.Gone
	}
	return FromClaims(claims, gone, running)
}

func (o Outcome) sorted() Outcome {
	slices.Sort(o.Nodes)
	slices.Sort(o.Deletions)
	return o
}

// withoutZones drops the zone from every node: for scenarios whose
// zones the cluster picks by timing (see Known).
func (o Outcome) withoutZones() Outcome {
	strip := func(s string) string {
		parts := strings.SplitN(s, "/", 3)
		if len(parts) < 3 {
			return s
		}
		return parts[0] + "/*/" + parts[2]
	}
	out := Outcome{Running: o.Running}
	for _, n := range o.Nodes {
		out.Nodes = append(out.Nodes, strip(n))
	}
	for _, d := range o.Deletions {
		out.Deletions = append(out.Deletions, strip(d))
	}
	return out.sorted()
}
