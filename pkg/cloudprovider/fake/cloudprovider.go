package fake

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Name is what the fake's Name returns.
const Name = "fake"

// CloudProvider is a recording fake. Set the configuration fields before
// the code under test runs; read the recorded fields after its calls have
// returned. The zero value is ready to use.
type CloudProvider struct {
	// InstanceTypes are returned by GetInstanceTypes (for any NodePool)
	// and are what Create chooses from. They are never mutated.
	InstanceTypes []*cloudprovider.InstanceType
	// NextCreateErr is returned by the next Create, which launches
	// nothing, and is then cleared.
	NextCreateErr error
	// NextDeleteErr is returned by the next Delete, which terminates
	// nothing, and is then cleared.
	NextDeleteErr error
	// Drifted is what IsDrifted returns for every NodeClaim.
	Drifted cloudprovider.DriftReason
	// NodeClasses is what GetSupportedNodeClasses returns; nil means
	// SimNodeClass, the kind pkg/test's builders reference.
	NodeClasses []schema.GroupVersionKind
	// Notices are returned by Interruptions while their instance exists
	// (a notice for a ProviderID the fake never created is returned until
	// Reset); Delete drops the notices of the instance it terminates.
	Notices []cloudprovider.InterruptionNotice
	// Repair is what RepairPolicies returns.
	Repair []cloudprovider.RepairPolicy

	// CreateCalls, DeleteCalls, GetCalls, GetInstanceTypesCalls and
	// IsDriftedCalls record the arguments of every call, in order;
	// ListCalls and InterruptionsCalls count calls.
	CreateCalls           []*v1.NodeClaim
	DeleteCalls           []*v1.NodeClaim
	GetCalls              []string
	GetInstanceTypesCalls []*v1.NodePool
	IsDriftedCalls        []*v1.NodeClaim
	ListCalls             int
	InterruptionsCalls    int

	// Created holds the running "instances" by provider id: what Create
	// returned, until Delete.
	Created map[string]*v1.NodeClaim

	mu       sync.Mutex
	launched int
}

var (
	_ cloudprovider.CloudProvider      = (*CloudProvider)(nil)
	_ cloudprovider.InterruptionSource = (*CloudProvider)(nil)
)

// New returns a fake that offers instanceTypes.
func New(instanceTypes ...*cloudprovider.InstanceType) *CloudProvider {
	return &CloudProvider{InstanceTypes: instanceTypes}
}

// Reset clears everything, configuration included, as a new zero value.
func (c *CloudProvider) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.InstanceTypes = nil
	c.NextCreateErr, c.NextDeleteErr = nil, nil
	c.Drifted, c.NodeClasses, c.Notices = "", nil, nil
	c.CreateCalls, c.DeleteCalls, c.GetCalls = nil, nil, nil
	c.GetInstanceTypesCalls, c.IsDriftedCalls = nil, nil
	c.ListCalls, c.InterruptionsCalls = 0, 0
	c.Created = nil
	c.launched = 0
}

// Create launches on the cheapest available offering, over every instance
// type, that nodeClaim's requirements and resource requests allow (ties
// by instance type name, then zone, capacity type and reservation). With
// none, it returns an *InsufficientCapacityError naming every compatible
// offering that had no capacity.
func (c *CloudProvider) Create(_ context.Context, nodeClaim *v1.NodeClaim) (*v1.NodeClaim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.CreateCalls = append(c.CreateCalls, nodeClaim)
	if err := c.NextCreateErr; err != nil {
		c.NextCreateErr = nil
		return nil, err
	}
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(nodeClaim.Spec.Requirements...)
	it, offering, err := cheapest(c.InstanceTypes, reqs, nodeClaim.Spec.Resources.Requests)
	if err != nil {
		return nil, fmt.Errorf("launching nodeclaim %s, %w", nodeClaim.Name, err)
	}
	c.launched++
	out := nodeClaim.DeepCopy()
	out.Labels = launchLabels(nodeClaim.Labels, reqs, it, offering)
	out.Status.ProviderID = fmt.Sprintf("fake://%s/%d", offering.Zone, c.launched)
	out.Status.Capacity = it.Capacity.DeepCopy()
	out.Status.Allocatable = it.Allocatable()
	if c.Created == nil {
		c.Created = map[string]*v1.NodeClaim{}
	}
	c.Created[out.Status.ProviderID] = out.DeepCopy()
	return out, nil
}

// cheapest picks the instance type and offering Create launches.
func cheapest(its []*cloudprovider.InstanceType, reqs scheduling.Requirements, requests corev1.ResourceList) (*cloudprovider.InstanceType, *cloudprovider.Offering, error) {
	var bestIT *cloudprovider.InstanceType
	var best *cloudprovider.Offering
	ice := cloudprovider.NewInsufficientCapacityError(nil)
	for _, it := range its {
		if it.Requirements.Intersects(reqs) != nil || !fits(requests, it.Allocatable()) {
			continue
		}
		for _, o := range it.Offerings {
			if !o.CompatibleWith(reqs) {
				continue
			}
			if !o.IsAvailable() {
				ice.Add(o.Key(it.Name), string(cloudprovider.CodeInsufficientInstanceCapacity))
				continue
			}
			if best == nil || less(it, o, bestIT, best) {
				bestIT, best = it, o
			}
		}
	}
	if best == nil {
		return nil, nil, ice
	}
	return bestIT, best, nil
}

// less orders (instance type, offering) pairs by price, then by name so
// the choice is deterministic.
func less(it *cloudprovider.InstanceType, o *cloudprovider.Offering, bestIT *cloudprovider.InstanceType, best *cloudprovider.Offering) bool {
	return cmp.Or(
		cmp.Compare(o.Price, best.Price),
		cmp.Compare(it.Name, bestIT.Name),
		cmp.Compare(o.Zone, best.Zone),
		cmp.Compare(o.CapacityType, best.CapacityType),
		cmp.Compare(o.ReservationID, best.ReservationID),
	) < 0
}

// fits reports whether every request is within allocatable.
func fits(requests, allocatable corev1.ResourceList) bool {
	for name, q := range requests {
		a, ok := allocatable[name]
		if !ok {
			if q.Sign() > 0 {
				return false
			}
			continue
		}
		if q.Cmp(a) > 0 {
			return false
		}
	}
	return true
}

// launchLabels are the NodeClaim's own labels, those its requirements pin
// to one value, then the instance's facts, which win.
func launchLabels(own map[string]string, reqs scheduling.Requirements, it *cloudprovider.InstanceType, o *cloudprovider.Offering) map[string]string {
	labels := maps.Clone(own)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, reqs.Labels())
	maps.Copy(labels, it.Requirements.Labels())
	labels[v1.LabelInstanceType] = it.Name
	labels[v1.LabelZone] = o.Zone
	labels[v1.CapacityTypeLabelKey] = o.CapacityType
	maps.Copy(labels, o.ReservationLabels())
	if o.CapacityType == v1.CapacityTypeSpot {
		labels[v1.InterruptibleLabelKey] = "true"
	}
	return labels
}

// Delete terminates the instance, or returns *NodeClaimNotFoundError when
// the fake has no instance with nodeClaim's provider id.
func (c *CloudProvider) Delete(_ context.Context, nodeClaim *v1.NodeClaim) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.DeleteCalls = append(c.DeleteCalls, nodeClaim)
	if err := c.NextDeleteErr; err != nil {
		c.NextDeleteErr = nil
		return err
	}
	id := nodeClaim.Status.ProviderID
	if _, ok := c.Created[id]; !ok {
		return cloudprovider.NewNodeClaimNotFoundError(id, nil)
	}
	delete(c.Created, id)
	c.Notices = slices.DeleteFunc(c.Notices, func(n cloudprovider.InterruptionNotice) bool { return n.ProviderID == id })
	return nil
}

// Get returns a copy of the instance, or *NodeClaimNotFoundError.
func (c *CloudProvider) Get(_ context.Context, providerID string) (*v1.NodeClaim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.GetCalls = append(c.GetCalls, providerID)
	nc, ok := c.Created[providerID]
	if !ok {
		return nil, cloudprovider.NewNodeClaimNotFoundError(providerID, nil)
	}
	return nc.DeepCopy(), nil
}

// List returns copies of every instance, sorted by provider id.
func (c *CloudProvider) List(context.Context) ([]*v1.NodeClaim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ListCalls++
	out := make([]*v1.NodeClaim, 0, len(c.Created))
	for _, id := range slices.Sorted(maps.Keys(c.Created)) {
		out = append(out, c.Created[id].DeepCopy())
	}
	return out, nil
}

// GetInstanceTypes returns InstanceTypes (a new slice of the same values).
func (c *CloudProvider) GetInstanceTypes(_ context.Context, nodePool *v1.NodePool) ([]*cloudprovider.InstanceType, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.GetInstanceTypesCalls = append(c.GetInstanceTypesCalls, nodePool)
	return slices.Clone(c.InstanceTypes), nil
}

// IsDrifted returns Drifted.
func (c *CloudProvider) IsDrifted(_ context.Context, nodeClaim *v1.NodeClaim) (cloudprovider.DriftReason, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.IsDriftedCalls = append(c.IsDriftedCalls, nodeClaim)
	return c.Drifted, nil
}

// Name returns "fake".
func (c *CloudProvider) Name() string { return Name }

// RepairPolicies returns Repair.
func (c *CloudProvider) RepairPolicies() []cloudprovider.RepairPolicy {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.Repair)
}

// GetSupportedNodeClasses returns NodeClasses, SimNodeClass when unset.
func (c *CloudProvider) GetSupportedNodeClasses() []schema.GroupVersionKind {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.NodeClasses == nil {
		return []schema.GroupVersionKind{simv1alpha1.SchemeGroupVersion.WithKind("SimNodeClass")}
	}
	return slices.Clone(c.NodeClasses)
}

// Interruptions returns a copy of Notices: not consumed, per the
// InterruptionSource contract.
func (c *CloudProvider) Interruptions(context.Context) ([]cloudprovider.InterruptionNotice, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.InterruptionsCalls++
	return slices.Clone(c.Notices), nil
}
