package simulator

import (
	"cmp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Result is what `capstan simulate -o json` prints: a stable contract,
// documented in docs/simulate.md. Times are offsets from the start of
// the run ("0s", "1m30s").
type Result struct {
	Nodes   []Node   `json:"nodes"`
	Pods    []Pod    `json:"pods"`
	Events  []Event  `json:"events"`
	Summary Summary  `json:"summary"`
	Samples []Sample `json:"samples"`
	// Warnings are problems with objects simulate kept, as the
	// controller keeps them; absent when there are none.
	Warnings []Warning `json:"warnings,omitempty"`
	// ConsolidationScores are the consolidation moves Balanced
	// NodePools scored, taken or skipped, in order; absent when none
	// did.
	ConsolidationScores []ConsolidationScore `json:"consolidationScores,omitempty"`
	// Gangs are the all-or-nothing groups among the pods at the end
	// (docs/batch.md, "Gangs"), by key; absent when there are none.
	Gangs []Gang `json:"gangs,omitempty"`
	// ProvisioningRequests are the ProvisioningRequests at the end and
	// when each was provisioned or refused (docs/batch.md,
	// "ProvisioningRequest"); absent when there are none.
	ProvisioningRequests []ProvisioningRequest `json:"provisioningRequests,omitempty"`
	// CapacityBuffers are what each CapacityBuffer holds at the end and
	// its cost per hour; absent when there are none (or the gate is off).
	CapacityBuffers []BufferCost `json:"capacityBuffers,omitempty"`
}

// Warning is a problem with an object that is kept nonetheless: a
// NodePool setting Capstan cannot use, which the controller reports on
// the NodePool's ValidationSucceeded condition (pkg/admission).
type Warning struct {
	// Object is "nodepool/NAME".
	Object string `json:"object"`
	// Source locates the document ("pool.yaml, document 2").
	Source string `json:"source"`
	// Field is the field path ("spec.disruption.budgets[0].schedule").
	Field string `json:"field"`
	// Message says it all: the document, object, field and problem.
	Message string `json:"message"`
}

// warningsOf are the manifests' warnings as the result reports them.
func warningsOf(set []manifests.Warning) []Warning {
	var out []Warning
	for _, w := range set {
		out = append(out, Warning{Object: strings.ToLower(w.Kind) + "/" + w.Name, Source: w.Source, Field: w.Err.Field, Message: w.String()})
	}
	return out
}

// Node is one launched instance, from launch to deletion or the end.
type Node struct {
	// Name is the Node's name once registered, else the NodeClaim's.
	Name          string  `json:"name"`
	NodeClaim     string  `json:"nodeClaim"`
	NodePool      string  `json:"nodePool"`
	InstanceType  string  `json:"instanceType"`
	Zone          string  `json:"zone"`
	CapacityType  string  `json:"capacityType"`
	ReservationID string  `json:"reservationID"`
	PricePerHour  float64 `json:"pricePerHour"`
	LaunchedAt    string  `json:"launchedAt"`
	// DisruptedAt is when disruption tainted the node to replace or
	// remove it; empty if it never did (or the command was abandoned).
	DisruptedAt string `json:"disruptedAt"`
	// DeletedAt is empty for a node still there at the end.
	DeletedAt      string `json:"deletedAt"`
	DeletionReason string `json:"deletionReason"`
	// Pods ran on the node at the end, or when it was deleted.
	Pods []string `json:"pods"`
	// Flavor is the llmaz flavor the node was launched for and its rank
	// ("t4 (2 of 2)", the NodeClaim's capstan.dev/flavor); absent for
	// other nodes.
	Flavor string `json:"flavor,omitempty"`
}

// Pod is a pod present at the end of the run.
type Pod struct {
	Name string `json:"name"`
	// Node is empty for a pending pod.
	Node string `json:"node"`
	// PendingReason is the solver's reason code and message ("Reason:
	// message") for a pending pod.
	PendingReason string `json:"pendingReason"`
}

// Event is something that happened, in order.
type Event struct {
	At      string `json:"at"`
	Kind    string `json:"kind"`
	Object  string `json:"object"`
	Message string `json:"message"`
}

// Summary totals the run.
type Summary struct {
	NodesLaunched    int     `json:"nodesLaunched"`
	NodesAtEnd       int     `json:"nodesAtEnd"`
	PodsPending      int     `json:"podsPending"`
	CostPerHourAtEnd float64 `json:"costPerHourAtEnd"`
	// TotalCost is what every node cost from launch to deletion or the
	// end, in the profile's currency.
	TotalCost float64 `json:"totalCost"`
	// ByCapacityType counts the nodes at the end.
	ByCapacityType map[string]int `json:"byCapacityType"`
	Duration       string         `json:"duration"`
}

// Sample is the cluster at one moment, for charts over virtual time: one
// is taken whenever something changed, and at the end.
type Sample struct {
	At string `json:"at"`
	// Seconds is At as a number, for plotting.
	Seconds     float64        `json:"seconds"`
	Nodes       map[string]int `json:"nodes"`
	CostPerHour float64        `json:"costPerHour"`
	PodsPending int            `json:"podsPending"`
}

// byCapacityType is a count per capacity type with every key present,
// so a JSON reader always finds all three.
func byCapacityType() map[string]int {
	return map[string]int{v1.CapacityTypeSpot: 0, v1.CapacityTypeOnDemand: 0, v1.CapacityTypeReserved: 0}
}

// offset renders a time as the run's offset, whole milliseconds.
func offset(start, at time.Time) string {
	return at.Sub(start).Truncate(time.Millisecond).String()
}

// result assembles the report at the end of the run.
func (s *Simulator) result() *Result {
	now := s.clock.Now()
	out := &Result{Nodes: []Node{}, Pods: []Pod{}, Events: s.rec.reported(), Samples: s.rec.samples, Warnings: s.warnings, ConsolidationScores: s.rec.scores}
	out.Summary.ByCapacityType = byCapacityType()
	out.Summary.Duration = s.opts.Duration.String()
	for _, rec := range s.rec.records() {
		n := rec.Node
		ended := rec.ended
		if ended.IsZero() {
			ended = now
			out.Summary.CostPerHourAtEnd += n.PricePerHour
		}
		if n.DeletedAt == "" {
			out.Summary.NodesAtEnd++
			out.Summary.ByCapacityType[n.CapacityType]++
			for _, p := range s.world.podsOn(n.Name) {
				n.Pods = append(n.Pods, podKey(p))
			}
		}
		out.Summary.TotalCost += rec.cost(ended)
		out.Nodes = append(out.Nodes, n)
	}
	out.Summary.NodesLaunched = len(out.Nodes)
	for _, p := range s.world.sortedPods() {
		pod := Pod{Name: podKey(p), Node: p.Spec.NodeName}
		if pod.Node == "" {
			pod.PendingReason = cmp.Or(s.rec.reasons[pod.Name], s.unsolved(p))
			out.Summary.PodsPending++
		}
		out.Pods = append(out.Pods, pod)
	}
	slices.SortFunc(out.Pods, func(a, b Pod) int { return cmp.Compare(a.Name, b.Name) })
	if n := len(out.Samples); n == 0 || out.Samples[n-1].At != offset(s.start, now) {
		last := Sample{Nodes: byCapacityType()}
		if n > 0 {
			last = out.Samples[n-1]
		}
		last.At, last.Seconds = offset(s.start, now), now.Sub(s.start).Seconds()
		out.Samples = append(out.Samples, last)
	}
	if out.Events == nil {
		out.Events = []Event{}
	}
	out.Gangs = s.gangs(out.Pods)
	out.ProvisioningRequests = s.provisioningRequestsReport()
	out.CapacityBuffers = s.bufferCosts(state.Build(s.world.objects(), nil, s.opts.SchedulerNames).Input, out.Nodes)
	return out
}

// unsolved is the reason of a pending pod no provisioning decision has
// named: Capstan does not serve its scheduler, or the provisioner had not
// solved for it yet (its batch window was open when the run ended).
func (s *Simulator) unsolved(p *corev1.Pod) string {
	if !slices.Contains(s.opts.SchedulerNames, p.Spec.SchedulerName) {
		return state.ReasonSchedulerNotServed + ": " + state.SchedulerNotServed(p.Spec.SchedulerName, s.opts.SchedulerNames)
	}
	return corev1.PodReasonUnschedulable + ": no node fits it; the provisioner's batch window was still open when the run ended"
}

// pendingCount counts pods not bound to a node.
func (s *Simulator) pendingCount() int {
	return s.world.pending
}
