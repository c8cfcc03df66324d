package provisioning

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// DefaultMaxInstanceTypes is how many instance-type options a NodeClaim
// keeps: enough flexibility for the cloud to find capacity, bounded so the
// launch request stays small.
const DefaultMaxInstanceTypes = 60

// ReservationMode says what to do when a pod needs a capacity reservation
// and every compatible one is full.
type ReservationMode int

const (
	// ReservationStrict never books more NodeClaims into a reservation than
	// it has free slots; a pod its NodePools allow only into reservations
	// then waits (ReservationExhausted). Provisioning uses it.
	ReservationStrict ReservationMode = iota
	// ReservationFallback lets such a pod be planned on the same instance
	// types bought on demand, so a what-if (consolidation, simulate) can
	// still ask where pods would go; the plan is never launched as is.
	ReservationFallback
)

// Options tune a solve.
type Options struct {
	// MaxInstanceTypes caps each NodeClaim's options (0 means the default).
	MaxInstanceTypes int
	ReservationMode  ReservationMode
	// KeepPreferences places pods only where every preference they have
	// (preferred affinity, ScheduleAnyway spread) holds: disruption's
	// simulations, so consolidation never moves pods somewhere launching
	// would not have put them (seed 004), and nodes do not churn.
	KeepPreferences bool
	// MinValuesPolicy and PreferencePolicy are the controller's
	// --min-values-policy and --preference-policy (policies.go).
	MinValuesPolicy  MinValuesPolicy
	PreferencePolicy PreferencePolicy
	// NewCapacityOnly places pods on new NodeClaims only, never on
	// existing nodes or in-flight NodeClaims (which still count for
	// topology and limits), growing a claim into a larger instance type
	// before opening another: disruption asks whether a node's pods fit
	// one new node of their own.
	NewCapacityOnly bool
	// Workers is how many goroutines a solve may use to read the pods'
	// specs (0: GOMAXPROCS). The result is the same for any.
	Workers int
}

// Input is everything a solve reads. Nothing in it is modified.
type Input struct {
	// Pods to place.
	Pods []*corev1.Pod
	// TermRequests, by pod, are what the pod requests when placed by
	// each of its required node-selector terms, in their order: an llmaz
	// flavor sizes its own terms (docs/gpu-flavors.md). A pod not in it,
	// or whose list does not have one entry per term, requests its own
	// for every term.
	TermRequests map[*corev1.Pod][]scheduling.Resources
	// Holding and Yielding are virtual pods (state.IsVirtual): they only
	// hold capacity and are never bound. Holding ones are placed before
	// Pods, so capacity booked for them is not given to others; Yielding
	// ones after, so Pods start on the capacity they keep warm. Each group
	// is placed largest first, as Pods are.
	Holding, Yielding []*corev1.Pod
	// Nodes are existing nodes and in-flight NodeClaims, with the pods
	// bound or nominated to them.
	Nodes []*Node
	// NodePools are tried by weight (highest first), then name.
	NodePools []*v1.NodePool
	// InstanceTypes are each NodePool's options, by NodePool name. A
	// reserved offering's Available is its reservation's free slots, net
	// of every instance already launched or booked into it.
	InstanceTypes map[string][]*cloudprovider.InstanceType
	// DaemonSetPods are one pod per DaemonSet (its template); those a new
	// node would run count against its capacity.
	DaemonSetPods []*corev1.Pod
	// Namespaces maps namespace names to their labels, for pod-affinity
	// namespaceSelectors.
	Namespaces map[string]map[string]string
	// Volumes are the claims, volumes and classes pods refer to.
	Volumes Volumes
	// UnusableNodePools are NodePools nothing can be launched from now
	// (their NodeClass is missing, not ready or of a kind the cloud
	// provider does not serve), by name, with why: a pod no other NodePool
	// takes reports it rather than "no NodePool exists".
	UnusableNodePools map[string]string
	// AtomicGroups are the min counts of the atomic groups (gangs) group
	// objects declare, by key (gang.Declared); a group not in it needs
	// every member placed. Groups are read from the pods (gang.KeyOf).
	AtomicGroups gang.Declared
	Options      Options
	// Prepared, when set, is the read-only data the solves of one
	// snapshot share (see Prepare); nil prepares everything in each
	// solve.
	Prepared *Prepared
}

// Node is an existing node, or an in-flight NodeClaim not yet registered,
// as the solver sees it.
type Node struct {
	Name string
	// NodePool owns the node; empty for nodes Capstan does not manage.
	NodePool string
	// Labels are the node's labels; for an in-flight NodeClaim those its
	// requirements fix to a single value.
	Labels      map[string]string
	Taints      []corev1.Taint
	Allocatable corev1.ResourceList
	// Capacity counts against the NodePool's limits.
	Capacity corev1.ResourceList
	// Pods are bound (or nominated) to the node, daemonset pods included.
	Pods []*corev1.Pod
	// Requested, when set, is Pods' requests summed, as state.Build
	// computes them once per snapshot: disruption solves the same
	// cluster once per candidate, and summing every bound pod's requests
	// each time was most of its cost. Nil: the solver sums Pods.
	Requested *scheduling.Resources
	// HostPorts, with Requested set, are Pods' host ports, gathered with
	// it for the same reason: the binder solves once per wake.
	HostPorts []scheduling.HostPort
	// Groups, when set, are Pods grouped by what topology counting reads
	// of them (GroupPods), as state.Build computes them once per
	// snapshot: counting every bound pod against every selector in each
	// of disruption's solves was most of their cost. Nil: the solver
	// counts Pods one by one.
	Groups []PodGroup
	// NodeClaim names the NodeClaim an existing node registered for, if
	// any (an in-flight NodeClaim's Name is its own).
	NodeClaim string
	// InFlight is set for a NodeClaim that has not registered a node yet.
	InFlight bool
	// AtomicGroup, on an in-flight NodeClaim launched for a gang, is the
	// gang's key: until it registers only the gang's pods are planned
	// onto it, so its members find the capacity launched for them.
	AtomicGroup string
	// Deleting nodes take no new pods.
	Deleting bool
}

// Result is a solve's decision.
type Result struct {
	NewNodeClaims []*NodeClaim
	// Nominations place pods on existing nodes and in-flight NodeClaims.
	Nominations []Nomination
	// Unplaced lists every pod that could not be placed, with why.
	Unplaced []Unplaced
}

// Nomination places a pod on an existing node or in-flight NodeClaim.
type Nomination struct {
	Pod      *corev1.Pod
	NodeName string
}

// NodeClaim is a node to launch.
type NodeClaim struct {
	NodePool string
	// Requirements the instance must satisfy: the NodePool's template, the
	// pods', the chosen instance types and capacity types.
	Requirements scheduling.Requirements
	// InstanceTypes are the options, cheapest first.
	InstanceTypes []*cloudprovider.InstanceType
	// Pods planned onto the node.
	Pods []*corev1.Pod
	// Terms are, for each of Pods, the index of its required
	// node-selector term the placement satisfies (0 for a pod without
	// any): with llmaz, the flavor that won.
	Terms []int
	// Requests sums the pods and the daemonsets the node will run.
	Requests corev1.ResourceList
	// ReservationID is set when the claim is booked into a reservation.
	ReservationID string
	// CapacityType is what the cloud is expected to launch the claim as:
	// the first capacity type it allows with an available offering, in the
	// order reserved, spot, on-demand (spot only within the on-demand
	// price).
	CapacityType string
	// AtomicGroup is the key of the atomic group (gang) the claim is
	// launched for, or "".
	AtomicGroup   string
	Labels        map[string]string
	Taints        []corev1.Taint
	StartupTaints []corev1.Taint
}

// Unplaced is a pod the solve could not place.
type Unplaced struct {
	Pod     *corev1.Pod
	Reason  Reason
	Message string
}
