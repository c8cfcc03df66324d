package explain

import (
	"time"

	"github.com/capstan-dev/capstan/pkg/budgets"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Pod answers "why is this pod pending, and what will Capstan do?".
type Pod struct {
	Pod string `json:"pod"`
	// Node is the node the pod is bound to, if any.
	Node string `json:"node,omitempty"`
	// Considered: Capstan provisions for the pod (a scheduler it serves
	// marked it Unschedulable); Consideration says why or why not.
	Considered    bool   `json:"considered"`
	Consideration string `json:"consideration"`
	// Next is what the next provisioning will do for the pod.
	Next      string        `json:"next,omitempty"`
	NodePools []PoolVerdict `json:"nodePools"`
	// LastEvent is the latest reason Capstan recorded on the pod.
	LastEvent string `json:"lastEvent,omitempty"`
	// Unknown lists what this answer could not know.
	Unknown []string `json:"unknown,omitempty"`
}

// PoolVerdict is one NodePool's answer for a pod.
type PoolVerdict struct {
	NodePool   string `json:"nodePool"`
	Compatible bool   `json:"compatible"`
	// Reason and Message say why not: the solver's reason code
	// (docs/reasons.md) or a flavor error.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Cheapest are the cheapest instance types that would fit, as the
	// NodePool would launch them.
	Cheapest []Option `json:"cheapest,omitempty"`
	Limits   []Limit  `json:"limits,omitempty"`
	// Unavailable are marked offerings of the pool's instance types.
	Unavailable []cloudprovider.Mark `json:"unavailable,omitempty"`
}

// Option is an instance type a NodeClaim could launch.
type Option struct {
	InstanceType string  `json:"instanceType"`
	CapacityType string  `json:"capacityType"`
	PricePerHour float64 `json:"pricePerHour"`
}

// Limit is a NodePool limit and how much of it the NodePool's nodes use.
type Limit struct {
	Resource string `json:"resource"`
	Used     string `json:"used"`
	Limit    string `json:"limit"`
}

// NodePool answers "what does this NodePool have, cost and allow?".
type NodePool struct {
	NodePool string         `json:"nodePool"`
	Limits   []Limit        `json:"limits,omitempty"`
	Nodes    map[string]int `json:"nodes"`
	// CostPerHour sums the offering prices of the NodePool's launched
	// nodes; nil when prices are unknown (no controller to ask).
	CostPerHour *float64 `json:"costPerHour,omitempty"`
	// TimeZone is the budgets' zone; budget times are given in UTC and
	// in it.
	TimeZone string           `json:"timeZone"`
	Budgets  []budgets.Status `json:"budgets"`
	Unknown  []string         `json:"unknown,omitempty"`
}

// Node answers "what is this node, and why this one?".
type Node struct {
	Node          string `json:"node,omitempty"`
	NodeClaim     string `json:"nodeClaim"`
	NodePool      string `json:"nodePool"`
	InstanceType  string `json:"instanceType,omitempty"`
	CapacityType  string `json:"capacityType,omitempty"`
	Zone          string `json:"zone,omitempty"`
	ReservationID string `json:"reservationID,omitempty"`
	// Lifecycle is where the NodeClaim is: Launching, Registering,
	// Initializing, Ready or Deleting.
	Lifecycle  string      `json:"lifecycle"`
	Conditions []Condition `json:"conditions"`
	// Preferred is what the solver preferred (instance type/capacity
	// type); Fallback why the node is not on it; Flavor the llmaz flavor
	// it serves.
	Preferred string `json:"preferred,omitempty"`
	Fallback  string `json:"fallback,omitempty"`
	Flavor    string `json:"flavor,omitempty"`
	// Disruption will hold candidacy and blockers once disruption lands.
	Disruption string `json:"disruption"`
}

// Condition is a NodeClaim condition.
type Condition struct {
	Type    string    `json:"type"`
	Status  string    `json:"status"`
	Reason  string    `json:"reason,omitempty"`
	Message string    `json:"message,omitempty"`
	Since   time.Time `json:"since"`
}
