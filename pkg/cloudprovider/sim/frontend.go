package sim

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// This file is the cloud's surface for a front end that serves it through
// another cloud's API (test/ec2endpoint): there an API request, not a
// NodeClaim's requirements, says what may launch and how to choose, and
// instances are terminated and tagged by id.

// Allocation is how a Launch orders its offerings, after EC2 Fleet's
// allocation strategies. Every strategy keeps the request's order among
// offerings it ranks equal.
type Allocation string

// Allocations.
const (
	// AllocationLowestPrice tries the cheapest offering first.
	AllocationLowestPrice Allocation = "lowest-price"
	// AllocationPriceCapacityOptimized tries the cheapest first and, among
	// equal prices, the deepest pool: the order Create tries spot in.
	AllocationPriceCapacityOptimized Allocation = "price-capacity-optimized"
	// AllocationCapacityOptimized tries the deepest pool first, whatever
	// it costs.
	AllocationCapacityOptimized Allocation = "capacity-optimized"
	// AllocationPrioritized keeps the request's order.
	AllocationPrioritized Allocation = "prioritized"
)

// LaunchOffering is one offering a Launch may try.
type LaunchOffering struct {
	InstanceType string
	Zone         string
	// ReservationID is the reservation a reserved launch goes into.
	ReservationID string
	// MaxPrice caps a spot offering's hourly price; zero leaves the
	// NodeClass's cap (by default the on-demand price).
	MaxPrice float64
	// Tags and Attributes are recorded on the instance when it launches
	// from this offering, over the request's.
	Tags, Attributes map[string]string
}

// LaunchRequest is one launch of one capacity type over offerings the
// caller chose.
type LaunchRequest struct {
	// NodeClaim names the instance's NodeClaim and gives its Node labels
	// and taints, as in Create; its requirements are not read.
	NodeClaim *v1.NodeClaim
	// NodeClass names the SimNodeClass the instance launches with, looked
	// up as Create looks up a NodeClaim's.
	NodeClass string
	// CapacityType is spot, on-demand or reserved; every offering is
	// tried as it (a reserved one needs its ReservationID).
	CapacityType string
	Offerings    []LaunchOffering
	Allocation   Allocation
	// OpenReservations places an on-demand launch whose offering an open,
	// active reservation of the same type and zone has a free slot for in
	// that reservation, as EC2 does with an instance whose capacity
	// reservation preference is open.
	OpenReservations bool
	// ReservationsFirst also tries those offerings before the others, as
	// EC2 Fleet's use-capacity-reservations-first does; it implies
	// OpenReservations.
	ReservationsFirst bool
	// Tags and Attributes are recorded on the instance.
	Tags, Attributes map[string]string
}

// LaunchResult is a launched instance, the index in the request's
// Offerings of the offering it launched from, and the offerings tried
// before it that failed, with their error codes (nil when the first one
// launched).
type LaunchResult struct {
	Instance Instance
	Offering int
	Failed   []cloudprovider.OfferingError
}

// LaunchError is a Launch that launched nothing: every offering's error,
// in the order tried, and what they amount to
// (cloudprovider.NewLaunchError), which it unwraps to.
type LaunchError struct {
	Failed []cloudprovider.OfferingError
	Err    error
}

// Error is the classified error's.
func (e *LaunchError) Error() string { return e.Err.Error() }

// Unwrap returns the classified error.
func (e *LaunchError) Unwrap() error { return e.Err }

// Launch starts one instance: it tries req's offerings in the order its
// Allocation gives and launches into the first with capacity, as Create
// does within a capacity type (pools, reservations, the spot cap and the
// account's spot limit decide alike). An offering the cloud does not have
// (an unknown type or zone, a reservation for another type or zone)
// fails with Unsupported; the profile's launch faults refuse offerings as
// they do Create's. When none launches it returns a *LaunchError naming
// each offering tried with the cloud's error code.
func (c *Cloud) Launch(ctx context.Context, req LaunchRequest) (LaunchResult, error) {
	nodeClass, err := c.nodeClass(ctx, req.NodeClass)
	if err != nil {
		return LaunchResult{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	release, err := c.syncLocked(ctx)
	if err != nil {
		return LaunchResult{}, cloudprovider.NewCreateError("StateFileUnavailable", err)
	}
	defer release()
	var failed []cloudprovider.OfferingError
	offerings := make([]LaunchOffering, len(req.Offerings))
	var cands []candidate
	for i, lo := range req.Offerings {
		lo.Tags, lo.Attributes = merged(req.Tags, lo.Tags), merged(req.Attributes, lo.Attributes)
		offerings[i] = lo
		cand, ok := c.explicitCandidateLocked(&offerings[i], req.CapacityType)
		if !ok {
			failed = append(failed, cloudprovider.OfferingError{
				Offering: cloudprovider.OfferingKey{CapacityType: req.CapacityType, InstanceType: lo.InstanceType, Zone: lo.Zone, ReservationID: lo.ReservationID},
				Code:     string(cloudprovider.CodeUnsupported),
			})
			continue
		}
		cands = append(cands, cand)
	}
	if len(cands) == 0 {
		return LaunchResult{}, &LaunchError{Failed: failed, Err: cloudprovider.NewLaunchError(failed,
			fmt.Errorf("launching nodeclaim %s: the cloud has none of the %d offerings", req.NodeClaim.Name, len(req.Offerings)))}
	}
	c.orderLocked(cands, req.Allocation)
	if req.CapacityType == v1.CapacityTypeOnDemand && (req.OpenReservations || req.ReservationsFirst) {
		cands = c.intoOpenReservationsLocked(cands, req.ReservationsFirst)
	}
	l := launch{nc: req.NodeClaim, nodeClass: nodeClass, now: c.opts.Clock.Now()}
	inst, cand, failed, err := c.launchLocked(ctx, l, cands, failed)
	if err != nil {
		// The offerings' errors, unless saving the state failed.
		if ce, ok := cloudprovider.AsCreateError(err); cloudprovider.IsInsufficientCapacityError(err) || ok && ce.Code != "" {
			return LaunchResult{}, &LaunchError{Failed: failed, Err: err}
		}
		return LaunchResult{}, err
	}
	res := LaunchResult{Instance: *inst, Failed: failed}
	for i := range offerings {
		if &offerings[i] == cand.offering {
			res.Offering = i
		}
	}
	res.Instance.Tags, res.Instance.Attributes = maps.Clone(inst.Tags), maps.Clone(inst.Attributes)
	return res, nil
}

// merged is over's entries over base's, nil when both are empty.
func merged(base, over map[string]string) map[string]string {
	if len(base)+len(over) == 0 {
		return nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}

// explicitCandidateLocked prices an offering of capacity type ct; false
// when the cloud does not have it.
func (c *Cloud) explicitCandidateLocked(lo *LaunchOffering, ct string) (candidate, bool) {
	spec := &c.opts.Profile.Spec
	entry, ok := c.catalog[lo.InstanceType]
	if !ok || !slices.Contains(spec.Zones, lo.Zone) {
		return candidate{}, false
	}
	od, ok := entry.OnDemandPrice(spec.Region)
	if !ok {
		return candidate{}, false
	}
	o := &cloudprovider.Offering{Zone: lo.Zone, ZoneID: ZoneID(spec, lo.Zone), CapacityType: ct, Available: cloudprovider.Unlimited}
	switch ct {
	case v1.CapacityTypeSpot:
		o.Price = c.spotPriceLocked(entry, lo.Zone)
	case v1.CapacityTypeOnDemand:
		o.Price = od
	case v1.CapacityTypeReserved:
		r := c.state.Reservations[lo.ReservationID]
		if r == nil || r.InstanceType != lo.InstanceType || r.Zone != lo.Zone {
			return candidate{}, false
		}
		o.ReservationID, o.Price = r.ID, od/cloudprovider.ReservedPriceDivisor
		o.ReservationType, o.ReservationInterruptible = r.Kind()
	default:
		return candidate{}, false
	}
	return candidate{it: c.instanceType(entry), o: o, onDemand: od, offering: lo}, true
}

// orderLocked sorts candidates for an allocation strategy, stably.
func (c *Cloud) orderLocked(cands []candidate, a Allocation) {
	byPrice := func(x, y candidate) int { return cmp.Compare(x.o.Price, y.o.Price) }
	deeperFirst := func(x, y candidate) int { return cmp.Compare(c.poolDepthLocked(y), c.poolDepthLocked(x)) }
	switch a {
	case AllocationLowestPrice:
		slices.SortStableFunc(cands, byPrice)
	case AllocationPriceCapacityOptimized:
		slices.SortStableFunc(cands, func(x, y candidate) int { return cmp.Or(byPrice(x, y), deeperFirst(x, y)) })
	case AllocationCapacityOptimized:
		slices.SortStableFunc(cands, deeperFirst)
	}
}

// intoOpenReservationsLocked turns each on-demand candidate that an open,
// active reservation of its type and zone has room for into a launch into
// that reservation (the first by id); first moves those ahead of the
// rest.
func (c *Cloud) intoOpenReservationsLocked(cands []candidate, first bool) []candidate {
	now := c.opts.Clock.Now()
	ids := slices.Sorted(maps.Keys(c.state.Reservations))
	var reserved, rest []candidate
	for _, cand := range cands {
		i := slices.IndexFunc(ids, func(id string) bool {
			r := c.state.Reservations[id]
			return r.Type == simv1alpha1.ReservationTypeOpen && r.InstanceType == cand.it.Name && r.Zone == cand.o.Zone && r.Available() > 0 && r.Active(now)
		})
		if i < 0 {
			rest = append(rest, cand)
			continue
		}
		o := *cand.o
		o.CapacityType, o.ReservationID, o.Price = v1.CapacityTypeReserved, ids[i], cand.onDemand/cloudprovider.ReservedPriceDivisor
		o.ReservationType, o.ReservationInterruptible = c.state.Reservations[ids[i]].Kind()
		cand.o = &o
		if first {
			reserved = append(reserved, cand)
		} else {
			rest = append(rest, cand)
		}
	}
	return append(reserved, rest...)
}

// UnknownInstanceError names instance ids the cloud never launched.
type UnknownInstanceError struct {
	IDs []string
}

// Error lists the ids.
func (e *UnknownInstanceError) Error() string {
	return "unknown instance(s) " + strings.Join(e.IDs, ", ")
}

// TerminateInstances terminates the instances with ids and returns each
// one's state before, in the order of ids. Terminating a terminated
// instance changes nothing. When any id is unknown it returns an
// *UnknownInstanceError and terminates none, as EC2 does.
func (c *Cloud) TerminateInstances(ctx context.Context, ids []string) ([]InstanceState, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	release, err := c.syncLocked(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := c.knownLocked(ids); err != nil {
		return nil, err
	}
	before := make([]InstanceState, len(ids))
	changed := false
	for i, id := range ids {
		inst := c.state.Instances[id]
		before[i] = inst.State
		if inst.State != InstanceTerminated {
			c.terminateLocked(ctx, inst)
			changed = true
		}
	}
	if !changed {
		return before, nil
	}
	// When the save fails the instances run on, as the file says.
	if err := c.commitLocked(); err != nil {
		return nil, fmt.Errorf("terminating instances %s, %w", strings.Join(ids, ", "), err)
	}
	return before, nil
}

// TagInstances adds tags to the instances with ids, replacing the values
// of keys they have. When any id is unknown it returns an
// *UnknownInstanceError and tags none.
func (c *Cloud) TagInstances(ctx context.Context, ids []string, tags map[string]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	release, err := c.syncLocked(ctx)
	if err != nil {
		return err
	}
	defer release()
	if err := c.knownLocked(ids); err != nil {
		return err
	}
	for _, id := range ids {
		inst := c.state.Instances[id]
		// A new map, so that snapshots handed out keep what they saw.
		merged := maps.Clone(inst.Tags)
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, tags)
		inst.Tags = merged
	}
	if err := c.commitLocked(); err != nil {
		return fmt.Errorf("tagging instances %s, %w", strings.Join(ids, ", "), err)
	}
	return nil
}

func (c *Cloud) knownLocked(ids []string) error {
	var unknown []string
	for _, id := range ids {
		if c.state.Instances[id] == nil {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		return &UnknownInstanceError{IDs: unknown}
	}
	return nil
}

// Price is what an hour of an instance type costs in a zone now.
type Price struct {
	InstanceType, Zone string
	OnDemand, Spot     float64
}

// Prices returns the on-demand and spot price of every catalog type sold
// in the region in each zone, as launches see them now (spot prices move
// with the profile's events), by type in catalog order, then zone in the
// profile's order.
func (c *Cloud) Prices(ctx context.Context) ([]Price, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	release, err := c.syncLocked(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	spec := &c.opts.Profile.Spec
	var out []Price
	for _, entry := range c.opts.Catalog {
		od, ok := entry.OnDemandPrice(spec.Region)
		if !ok {
			continue
		}
		for _, z := range spec.Zones {
			out = append(out, Price{InstanceType: entry.Name, Zone: z, OnDemand: od, Spot: c.spotPriceLocked(entry, z)})
		}
	}
	return out, nil
}
