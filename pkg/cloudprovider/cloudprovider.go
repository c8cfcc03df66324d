package cloudprovider

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// CloudProvider launches and terminates the instances behind NodeClaims and
// describes what can be launched. Implementations must be safe for
// concurrent use: the provisioner, the lifecycle, termination, disruption
// and garbage-collection controllers call them in parallel.
//
// The NodeClaims passed in are never mutated; results are new objects.
type CloudProvider interface {
	// Create launches one instance satisfying nodeClaim's requirements and
	// resource requests, with its NodeClass (spec.nodeClassRef).
	//
	// Choice: among the compatible instance types and their available
	// offerings (see GetInstanceTypes), the first capacity type the
	// requirements allow that has an available offering wins, in the order
	// reserved → spot → on-demand (requirements allowing every capacity
	// type try all three). Spot offerings priced above the cheapest
	// compatible on-demand offering are not tried. Spot launches use a
	// price-capacity-optimized allocation over the candidate types, on-demand
	// the lowest price.
	//
	// Result: a new NodeClaim (a copy of nodeClaim) with status.providerID,
	// status.capacity and status.allocatable set (status.imageID too where
	// the provider has images), and the labels the instance carries added:
	// node.kubernetes.io/instance-type, topology.kubernetes.io/zone (and
	// region, and the offering's topology.k8s.aws/zone-id where it has
	// one), karpenter.sh/capacity-type, the capacity reservation id for
	// reserved launches, cluster.x-k8s.io/interruptible for spot (decision
	// 7), and the instance type's single-valued labels (arch, os, instance
	// family, ...).
	//
	// Errors: when no tried offering has capacity it returns
	// *InsufficientCapacityError naming every offering tried and why, so the
	// caller can mark them all unavailable at once (UnavailableOfferings
	// MarkFromError) and re-simulate. A NodeClass that is missing or not
	// ready yields *NodeClassNotReadyError; any other launch failure a
	// *CreateError carrying a condition reason. Create must never leak an
	// instance: on any error, nothing it started keeps running (or the
	// provider has recorded it where List finds it, so garbage collection
	// terminates it).
	Create(ctx context.Context, nodeClaim *v1.NodeClaim) (*v1.NodeClaim, error)

	// Delete terminates the instance behind nodeClaim.status.providerID.
	// Once the instance is gone (terminated or never existed) it returns
	// *NodeClaimNotFoundError; callers that only want it gone wrap the call
	// in IgnoreNodeClaimNotFound, which makes Delete idempotent. A nil
	// error means termination started, not that it finished: callers call
	// Delete again until it reports not found.
	Delete(ctx context.Context, nodeClaim *v1.NodeClaim) error

	// Get returns the instance with providerID as a NodeClaim (labels,
	// status.providerID, capacity, allocatable; no spec beyond what the
	// instance records), or *NodeClaimNotFoundError once it is gone.
	Get(ctx context.Context, providerID string) (*v1.NodeClaim, error)

	// List returns every running instance this provider launched for the
	// cluster, including those whose NodeClaim no longer exists, so garbage
	// collection can find leaked instances. Order is unspecified.
	List(ctx context.Context) ([]*v1.NodeClaim, error)

	// GetInstanceTypes returns the instance types nodePool's NodeClass can
	// launch, each with its offerings. An offering's Available count
	// reflects the unavailable-offerings cache (0 while marked) and, for
	// reserved offerings, the reservation's free slots. The NodePool's
	// requirements are not applied: the solver does that. A NodeClass that
	// is missing or not ready yields *NodeClassNotReadyError. The returned
	// values are shared and must not be mutated. The answer depends on the
	// NodeClass only: InstanceTypesByNodePool asks once per NodeClass.
	GetInstanceTypes(ctx context.Context, nodePool *v1.NodePool) ([]*InstanceType, error)

	// IsDrifted reports why nodeClaim's instance no longer matches its
	// NodeClass (image, subnet, security group, ...); "" means not drifted.
	// NodePool drift (hash, requirements) is Capstan's, not the provider's.
	IsDrifted(ctx context.Context, nodeClaim *v1.NodeClaim) (DriftReason, error)

	// Name is the provider's short name ("sim", "aws"); it labels metrics.
	Name() string

	// GetSupportedNodeClasses lists the kinds a nodeClassRef may name;
	// the first is the default. GroupVersionKinds rather than objects, so
	// this package needs no controller-runtime import.
	GetSupportedNodeClasses() []schema.GroupVersionKind

	// RepairPolicies are the node conditions that make a node unhealthy,
	// each with how long it is tolerated before the node is repaired
	// (replaced within its NodePool's repair budget); none turns repair
	// off. The answer does not change while the provider runs.
	RepairPolicies() []RepairPolicy
}

// DriftReason says why an instance drifted from its NodeClass; "" means
// not drifted. It becomes the reason of the NodeClaim's Drifted condition.
type DriftReason string

// InterruptionSource is an optional interface a CloudProvider may also
// implement: the cloud's notices that instances are about to be taken away
// or disturbed. The interruption controller polls it; it never reads a
// provider's internals. Obtain it with AsInterruptionSource, which sees
// through decorators.
//
// Notices are not consumed: a notice is returned by every call until its
// instance is gone (Get reports not found), or until the consumer
// acknowledges it to a source that is also an InterruptionAcknowledger, so
// a reconciler that fails half way simply sees it again. Consumers
// deduplicate by (ProviderID, Kind).
type InterruptionSource interface {
	Interruptions(ctx context.Context) ([]InterruptionNotice, error)
}

// InterruptionAcknowledger is an optional interface an InterruptionSource
// may also implement: the consumer tells it which notices it has acted on
// for good (their effects applied), so the source may stop returning them.
// A source that keeps notices in memory (AWS's queue) needs it, or a
// notice nobody acts on again (a rebalance recommendation) is held for the
// instance's whole life. Obtain it with AsInterruptionAcknowledger.
type InterruptionAcknowledger interface {
	Acknowledge(ctx context.Context, notices []InterruptionNotice) error
}

// InterruptionKind is what the cloud announced (decision 6).
type InterruptionKind string

// Interruption kinds (decision 6).
const (
	// SpotInterruption: the cloud reclaims a spot instance at Deadline
	// (AWS 2 minutes, GCP 30 s, Azure 30 s ahead).
	SpotInterruption InterruptionKind = "SpotInterruption"
	// RebalanceRecommendation: a spot instance is at elevated risk of
	// interruption; advisory, there is no deadline.
	RebalanceRecommendation InterruptionKind = "RebalanceRecommendation"
	// ScheduledChange: maintenance (retirement, reboot) at Deadline.
	ScheduledChange InterruptionKind = "ScheduledChange"
	// InstanceStopping: the instance is stopping outside Capstan's control.
	InstanceStopping InterruptionKind = "InstanceStopping"
	// InstanceTerminating: the instance is terminating outside Capstan's
	// control.
	InstanceTerminating InterruptionKind = "InstanceTerminating"
	// SpotPriceAboveMax: the spot price rose above the offering's maximum
	// price (by default the on-demand price, decision 4), so the cloud
	// interrupts the instance.
	SpotPriceAboveMax InterruptionKind = "SpotPriceAboveMax"
	// PreemptibleMaxLifetime: a GCP-style preemptible instance reaches its
	// maximum lifetime (PreemptibleLifetime) at Deadline; replace it
	// before then.
	PreemptibleMaxLifetime InterruptionKind = "PreemptibleMaxLifetime"
	// AzureEviction: an Azure spot VM is evicted (deallocated or deleted,
	// per its eviction policy, decision 5) at Deadline.
	AzureEviction InterruptionKind = "AzureEviction"
	// CapacityReservationInterruption: the owner of an interruptible
	// capacity reservation reclaims it; its instance goes at Deadline.
	CapacityReservationInterruption InterruptionKind = "CapacityReservationInterruption"
	// InstanceUnhealthy: the cloud's own status checks find the instance
	// impaired; it is replaced at once (Deadline is when that was seen).
	InstanceUnhealthy InterruptionKind = "InstanceUnhealthy"
)

// PreemptibleLifetime is how long a GCP-style preemptible instance may
// run: the cloud stops it then (PreemptibleMaxLifetime).
const PreemptibleLifetime = 24 * time.Hour

// InterruptionKinds returns every kind, in declaration order.
func InterruptionKinds() []InterruptionKind {
	return []InterruptionKind{
		SpotInterruption, RebalanceRecommendation, ScheduledChange, InstanceStopping,
		InstanceTerminating, SpotPriceAboveMax, PreemptibleMaxLifetime, AzureEviction,
		CapacityReservationInterruption, InstanceUnhealthy,
	}
}

// InterruptionNotice is one announcement about one instance.
type InterruptionNotice struct {
	Kind       InterruptionKind
	ProviderID string
	// InstanceType and Zone let the consumer mark the offering unavailable
	// (a spot interruption means the pool is short) without a lookup.
	InstanceType, Zone string
	// Deadline is when the instance goes away; zero when the notice has
	// none (RebalanceRecommendation).
	Deadline time.Time
	// Message is the cloud's text, for events.
	Message string
}

// Unwrapper is implemented by decorators of a CloudProvider (metrics,
// logging) so that optional interfaces of the provider inside stay
// reachable.
type Unwrapper interface {
	Unwrap() CloudProvider
}

// AsInterruptionSource returns cp's interruption source: cp itself if it
// implements InterruptionSource, otherwise the first provider down its
// chain of Unwrap calls that does. Consumers use it rather than a type
// assertion so that any decorator works.
func AsInterruptionSource(cp CloudProvider) (InterruptionSource, bool) {
	return unwrapAs[InterruptionSource](cp)
}

// AsInterruptionAcknowledger returns cp's interruption acknowledger,
// looking down its chain of Unwrap calls as AsInterruptionSource does.
func AsInterruptionAcknowledger(cp CloudProvider) (InterruptionAcknowledger, bool) {
	return unwrapAs[InterruptionAcknowledger](cp)
}

// unwrapAs is cp as a T, or the first provider down its chain of Unwrap
// calls that is one.
func unwrapAs[T any](cp CloudProvider) (T, bool) {
	for cp != nil {
		if t, ok := cp.(T); ok {
			return t, true
		}
		u, ok := cp.(Unwrapper)
		if !ok {
			break
		}
		cp = u.Unwrap()
	}
	var zero T
	return zero, false
}

// CapacityBlockSource is an optional interface a CloudProvider may also
// implement: the capacity blocks (reservations for a fixed window, whose
// instances the cloud reclaims at the window's end) its instances may
// run in. The capacity-block controller and `capstan simulate` drain
// their nodes before the cloud reclaims them (disruption.CapacityBlockDrains).
// Obtain it with AsCapacityBlockSource, which sees through decorators.
type CapacityBlockSource interface {
	CapacityBlocks(ctx context.Context) ([]CapacityBlock, error)
}

// CapacityBlock is one capacity block: its reservation id (the
// karpenter.k8s.aws/capacity-reservation-id its nodes carry) and when
// the cloud starts reclaiming its instances.
type CapacityBlock struct {
	ID      string
	Reclaim time.Time
}

// AsCapacityBlockSource returns cp's capacity block source, looking down
// its chain of Unwrap calls as AsInterruptionSource does.
func AsCapacityBlockSource(cp CloudProvider) (CapacityBlockSource, bool) {
	return unwrapAs[CapacityBlockSource](cp)
}
