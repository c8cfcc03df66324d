package explain

import (
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/budgets"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// NodePoolInput is what explaining a NodePool reads.
type NodePoolInput struct {
	NodePool *v1.NodePool
	// Nodes are the snapshot's nodes and in-flight NodeClaims.
	Nodes      []*provisioning.Node
	NodeClaims []v1.NodeClaim
	// InstanceTypes are the NodePool's, whose offerings price its nodes;
	// nil when unknown (offline).
	InstanceTypes []*cloudprovider.InstanceType
	// Disruption is the cluster as the disruption controller sees it,
	// for the disruptions the budgets allow now; nil when unknown.
	// Its budgets are counted for the reasons of the default methods
	// (the gates change the methods, not the reasons they disrupt for).
	Disruption *disruption.Input
	Now        time.Time
}

// ForNodePool reports a NodePool's limits and use, its nodes by
// capacity type, what they cost, its budgets now, and how many of its
// nodes each disruption reason may disrupt now and how many are
// disrupting (disruption.AllowedByPool, as the controller counts).
func ForNodePool(in NodePoolInput) (NodePool, error) {
	np := in.NodePool
	out := NodePool{NodePool: np.Name, Limits: limits(np, in.Nodes), Nodes: map[string]int{}}
	cost := 0.0
	priced := in.InstanceTypes != nil
	for _, nc := range in.NodeClaims {
		if nc.Labels[v1.NodePoolLabelKey] != np.Name || nc.Status.ProviderID == "" {
			continue
		}
		out.Nodes[nc.Labels[v1.CapacityTypeLabelKey]]++
		if in.InstanceTypes != nil {
			price, ok := cloudprovider.LaunchedPrice(&nc, in.InstanceTypes)
			priced = priced && ok
			cost += price
		}
	}
	if priced {
		out.CostPerHour = &cost
	} else {
		out.Unknown = append(out.Unknown, "cost: offering prices are known to the controller (pass --controller-address)")
	}
	statuses, loc, err := budgets.Evaluate(np, in.Now)
	if err != nil {
		return NodePool{}, err
	}
	out.TimeZone, out.Budgets = loc.String(), statuses
	if in.Disruption != nil {
		out.DisruptionsAllowed, out.Disrupting = allowedNow(*in.Disruption, np, disruption.Methods(disruption.DefaultGates()), in.Now)
	} else {
		out.Unknown = append(out.Unknown, "disruptions allowed now: the NodePool's nodes were not read")
	}
	return out, nil
}
