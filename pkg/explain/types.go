package explain

import (
	"time"

	"github.com/capstan-dev/capstan/pkg/budgets"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
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
	Next string `json:"next,omitempty"`
	// Flavors are, for an llmaz model-serving pod, each flavor in the
	// order the provisioner tries them: what it needs and whether it fits
	// or why it is skipped.
	Flavors   []FlavorVerdict `json:"flavors,omitempty"`
	NodePools []PoolVerdict   `json:"nodePools"`
	// LastEvent is the latest reason Capstan recorded on the pod.
	LastEvent string `json:"lastEvent,omitempty"`
	// Unknown lists what this answer could not know.
	Unknown []string `json:"unknown,omitempty"`
}

// Held is capacity a node keeps for an object's virtual pods.
type Held struct {
	// For is "<Kind>/<namespace>/<name>".
	For  string `json:"for"`
	Pods int    `json:"pods"`
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
	// DisruptionsAllowed is how many more of the NodePool's nodes each
	// disruption reason (Empty, Drifted, Underutilized) may disrupt now:
	// the budgets in force over its registered nodes, less those
	// disrupting. Absent when the nodes are not known.
	DisruptionsAllowed map[string]int `json:"disruptionsAllowed,omitempty"`
	// Disrupting counts its registered nodes being deleted or NotReady,
	// which budgets count as already disrupting.
	Disrupting int      `json:"disrupting"`
	Unknown    []string `json:"unknown,omitempty"`
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
	// Holds is the capacity the node keeps for virtual pods (a
	// CapacityBuffer's, a ProvisioningRequest's), by the object they hold
	// it for: where disruption places them now, which it keeps
	// (docs/batch.md, "Capacity buffers").
	Holds []Held `json:"holds,omitempty"`
	// Return says, for a node that fell back from a reservation or spot
	// to on-demand, or whose pods run on a later one of their ordered
	// terms (llmaz flavors), whether and when it returns (its NodePool's
	// capstan.dev/return-to-preferred policy and the ReturnToPreferred or
	// ReturnToPreferredTerm method's verdict).
	Return string `json:"return,omitempty"`
	// Repair says, for a node a repair policy of its cloud provider finds
	// unhealthy, whether and when it is repaired (its toleration, its
	// NodePool's repair budget and breaker; docs/disruption.md, "Node
	// repair").
	Repair string `json:"repair,omitempty"`
	// Disruption says, in a sentence, why the node is or is not being
	// disrupted: the disruption controller's own candidates, budgets and
	// methods (disruption.Plan) run over the same snapshot.
	Disruption string `json:"disruption"`
	// DisruptionStatus sums Disruption up: one of the DisruptionStatus
	// values below.
	DisruptionStatus string `json:"disruptionStatus,omitempty"`
	// Candidate: a NodePool owns the NodeClaim and its Node registered,
	// so disruption considers it.
	Candidate bool `json:"candidate"`
	// DisruptionBlockedBy is what keeps voluntary disruption off the node
	// (the candidate's blocker, in the reference's words).
	DisruptionBlockedBy string `json:"disruptionBlockedBy,omitempty"`
	// DisruptionReason and DisruptionMethod are why and by which method
	// the node is being disrupted (its DisruptionReason condition), or
	// would be by the next planning round.
	DisruptionReason string `json:"disruptionReason,omitempty"`
	DisruptionMethod string `json:"disruptionMethod,omitempty"`
	// Drifted is the NodeClaim's Drifted condition, when True.
	Drifted *Drifted `json:"drifted,omitempty"`
	// ExpiresAt is when the node has lived for its expireAfter and is
	// deleted (forcefully: no budget or do-not-disrupt holds it); absent
	// when it never expires.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// Pods counts the pods that must move if the node goes (not
	// DaemonSet or finished pods); absent for a non-candidate.
	Pods *int `json:"pods,omitempty"`
	// ConsolidateAfter is the NodePool's ("Never" disables emptiness);
	// ConsolidatableAt when consolidateAfter has passed or will since
	// the last pod event.
	ConsolidateAfter string     `json:"consolidateAfter,omitempty"`
	ConsolidatableAt *time.Time `json:"consolidatableAt,omitempty"`
	// DisruptionsAllowed is how many more of the NodePool's nodes each
	// reason may disrupt now.
	DisruptionsAllowed map[string]int `json:"disruptionsAllowed,omitempty"`
	// DisruptionVerdicts are what the planning round's methods said of
	// the node: why they would disrupt it but may not now.
	DisruptionVerdicts []DisruptionVerdict `json:"disruptionVerdicts,omitempty"`
	// ConsolidationScore is the score of the move the planning round
	// weighed for the node under consolidationPolicy Balanced, taken or
	// not (docs/disruption.md, "Balanced consolidation").
	ConsolidationScore *disruption.MoveScore `json:"consolidationScore,omitempty"`
	// Unknown lists what this answer could not know.
	Unknown []string `json:"unknown,omitempty"`
}

// DisruptionStatus values.
const (
	// DisruptionNotCandidate: no NodePool owns the NodeClaim, or its Node
	// has not registered.
	DisruptionNotCandidate = "NotCandidate"
	// DisruptionDeleting: the NodeClaim or its Node is being deleted.
	DisruptionDeleting = "Deleting"
	// DisruptionDisrupting: a disruption command has tainted the node and
	// is launching its replacements.
	DisruptionDisrupting = "Disrupting"
	// DisruptionBlocked: a blocker keeps voluntary disruption off it.
	DisruptionBlocked = "Blocked"
	// DisruptionNext: the next planning round disrupts it.
	DisruptionNext = "Next"
	// DisruptionHeld: a method would disrupt it but may not now (a
	// budget, a pod that fits nowhere, another node going first).
	DisruptionHeld = "Held"
	// DisruptionWaiting: empty, consolidatable once consolidateAfter
	// passes.
	DisruptionWaiting = "Waiting"
	// DisruptionNone: no method has anything to do with it.
	DisruptionNone = "None"
)

// Drifted is a NodeClaim's Drifted condition.
type Drifted struct {
	Reason  string    `json:"reason"`
	Message string    `json:"message,omitempty"`
	Since   time.Time `json:"since"`
}

// DisruptionVerdict is a method's word on a node it would disrupt but
// may not now.
type DisruptionVerdict struct {
	Method  string `json:"method"`
	Event   string `json:"event"`
	Message string `json:"message"`
}

// Condition is a NodeClaim condition.
type Condition struct {
	Type    string    `json:"type"`
	Status  string    `json:"status"`
	Reason  string    `json:"reason,omitempty"`
	Message string    `json:"message,omitempty"`
	Since   time.Time `json:"since"`
}
