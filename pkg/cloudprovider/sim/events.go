package sim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Notice lengths by style (seed 000): AWS warns two minutes before it
// reclaims a spot instance, GCP and Azure thirty seconds. GCP preemptible
// VMs also end after 24 hours; the notice comes as for an interruption.
const (
	AWSSpotNotice          = 2 * time.Minute
	ShortSpotNotice        = 30 * time.Second
	PreemptibleMaxLifetime = cloudprovider.PreemptibleLifetime
	// ScheduledChangeNotice is how far ahead maintenance is announced.
	ScheduledChangeNotice = 10 * time.Minute
)

// advanceLocked applies the profile's events that are due, refreshes the
// account's view of its reservations when a refresh interval has passed,
// and ends the instances whose notice deadline has passed. Time moves
// only through the clock, so every public method calls it first; nothing
// runs in the background. Changes are saved; when that fails nothing
// advances and the error is returned.
func (c *Cloud) advanceLocked(ctx context.Context) error {
	now := c.opts.Clock.Now()
	changed := false
	// The last periodic refresh sees the events due by its own time and
	// none after, however late the clock is read.
	if at := lastRefresh(c.state.Start, now, c.reservationRefreshInterval()); at.After(c.state.ReservationsRefreshed) {
		c.applyEventsLocked(ctx, at)
		for _, r := range c.state.Reservations {
			r.observe()
		}
		c.state.ReservationsRefreshed = at
		changed = true
	}
	if c.applyEventsLocked(ctx, now) {
		changed = true
	}
	if c.endReservationsLocked(now) {
		changed = true
	}
	// Every call looks at every instance, so only the few whose notice is
	// due are sorted (for a deterministic order), not the whole inventory.
	var due []string
	for id, inst := range c.state.Instances {
		if inst.State == InstanceRunning && dueNotice(inst, now) != nil {
			due = append(due, id)
		}
	}
	slices.Sort(due)
	for _, id := range due {
		inst := c.state.Instances[id]
		changed = true
		if dueNotice(inst, now).Ends == InstanceStopped {
			inst.State = InstanceStopped
			c.stopNodeLocked(ctx, c.nodeName(inst))
		} else {
			c.terminateLocked(ctx, inst)
		}
	}
	if !changed {
		return nil
	}
	return c.commitLocked()
}

// endReservationsLocked carries out reservations' ends (seed 002): when a
// reservation ends, its instances leave it and run on as on-demand,
// billed at the on-demand price; a capacity block's instances are
// announced ScheduledChangeNotice ahead and reclaimed at its end instead.
func (c *Cloud) endReservationsLocked(now time.Time) bool {
	changed := false
	for _, id := range slices.Sorted(maps.Keys(c.state.Reservations)) {
		r := c.state.Reservations[id]
		if r.End.IsZero() || r.Ended {
			continue
		}
		if r.CapacityBlock {
			if now.Before(r.End.Add(-ScheduledChangeNotice)) {
				continue
			}
			// Its instances end with their notices at End.
			r.Ended = !now.Before(r.End)
			for _, inst := range c.instancesIn(id) {
				if !slices.ContainsFunc(inst.Notices, func(n Notice) bool { return n.Kind == string(cloudprovider.ScheduledChange) && n.Deadline.Equal(r.End) }) {
					inst.Notices = append(inst.Notices, Notice{Kind: string(cloudprovider.ScheduledChange), Deadline: r.End,
						Message: fmt.Sprintf("capacity block %s ends", id), Ends: InstanceTerminated})
					changed = true
				}
			}
			continue
		}
		if now.Before(r.End) {
			continue
		}
		r.Ended, changed = true, true
		for _, inst := range c.instancesIn(id) {
			inst.CapacityType, inst.ReservationID = v1.CapacityTypeOnDemand, ""
			if ct, ok := c.catalog[inst.InstanceType]; ok {
				inst.Price, _ = ct.OnDemandPrice(c.opts.Profile.Spec.Region)
			}
			inst.Labels[v1.CapacityTypeLabelKey] = v1.CapacityTypeOnDemand
			for _, k := range []string{v1.LabelCapacityReservationID, v1.LabelCapacityReservationType, v1.LabelCapacityReservationInterruptible} {
				delete(inst.Labels, k)
			}
			r.Used--
		}
	}
	return changed
}

// instancesIn are the running instances in reservation id, by id.
func (c *Cloud) instancesIn(id string) []*Instance {
	var out []*Instance
	for _, iid := range slices.Sorted(maps.Keys(c.state.Instances)) {
		if inst := c.state.Instances[iid]; inst.State == InstanceRunning && inst.ReservationID == id {
			out = append(out, inst)
		}
	}
	return out
}

// dueNotice is the instance's first notice whose deadline has passed and
// that ends it, nil if none.
func dueNotice(inst *Instance, now time.Time) *Notice {
	for i := range inst.Notices {
		if n := &inst.Notices[i]; n.Ends != "" && !n.Deadline.After(now) {
			return n
		}
	}
	return nil
}

// applyEventsLocked applies the profile's events due by until and
// reports whether there were any.
func (c *Cloud) applyEventsLocked(ctx context.Context, until time.Time) bool {
	events := c.opts.Profile.Spec.Events
	applied := false
	for c.state.Events < len(events) {
		e := events[c.state.Events]
		at := c.state.Start.Add(e.At.Duration)
		if at.After(until) {
			break
		}
		c.applyLocked(ctx, e, at)
		c.state.Events++
		applied = true
	}
	return applied
}

// reservationRefreshInterval is the profile's, or the default when unset.
func (c *Cloud) reservationRefreshInterval() time.Duration {
	if d := c.opts.Profile.Spec.ReservationRefreshInterval.Duration; d > 0 {
		return d
	}
	return DefaultReservationRefreshInterval
}

// spotNotice is the style's spot warning length (or the profile's
// spotNotice) and what the deadline does.
func (c *Cloud) spotNotice(inst *Instance) (time.Duration, InstanceState, cloudprovider.InterruptionKind) {
	notice := func(style time.Duration) time.Duration {
		if d := c.opts.Profile.Spec.SpotNotice.Duration; d > 0 {
			return d
		}
		return style
	}
	switch c.opts.Profile.Spec.Style {
	case simv1alpha1.CloudStyleAzure:
		ends := InstanceStopped
		if nc, err := c.opts.NodeClasses.SimNodeClass(context.Background(), inst.NodeClass); err == nil && nc.Spec.EvictionPolicy == simv1alpha1.EvictionPolicyDelete {
			ends = InstanceTerminated
		}
		return notice(ShortSpotNotice), ends, cloudprovider.AzureEviction
	case simv1alpha1.CloudStyleGCP:
		return notice(ShortSpotNotice), InstanceTerminated, cloudprovider.SpotInterruption
	}
	return notice(AWSSpotNotice), InstanceTerminated, cloudprovider.SpotInterruption
}

func (c *Cloud) applyLocked(ctx context.Context, e simv1alpha1.CloudEvent, at time.Time) {
	matches := func(inst *Instance) bool {
		if inst.State != InstanceRunning {
			return false
		}
		if e.InstanceID != "" {
			return inst.ID == e.InstanceID
		}
		return (e.InstanceType == "" || inst.InstanceType == e.InstanceType) && (e.Zone == "" || e.Zone == "*" || inst.Zone == e.Zone)
	}
	notify := func(spotOnly bool, notice func(*Instance) Notice) {
		for _, inst := range c.state.Instances {
			if matches(inst) && (!spotOnly || inst.CapacityType == v1.CapacityTypeSpot) {
				inst.Notices = append(inst.Notices, notice(inst))
			}
		}
	}
	switch e.Type {
	case simv1alpha1.EventSpotInterruption:
		notify(true, func(inst *Instance) Notice {
			d, ends, kind := c.spotNotice(inst)
			return Notice{Kind: string(kind), Deadline: at.Add(d), Message: "spot capacity reclaimed", Ends: ends}
		})
	case simv1alpha1.EventRebalanceRecommendation:
		notify(true, func(*Instance) Notice {
			return Notice{Kind: string(cloudprovider.RebalanceRecommendation), Message: "elevated risk of spot interruption"}
		})
	case simv1alpha1.EventScheduledChange:
		notify(false, func(*Instance) Notice {
			return Notice{Kind: string(cloudprovider.ScheduledChange), Deadline: at.Add(ScheduledChangeNotice), Message: "scheduled maintenance", Ends: InstanceTerminated}
		})
	case simv1alpha1.EventInstanceStopping:
		notify(false, func(*Instance) Notice {
			return Notice{Kind: string(cloudprovider.InstanceStopping), Deadline: at, Message: "instance stopping", Ends: InstanceStopped}
		})
	case simv1alpha1.EventInstanceTerminating:
		notify(false, func(*Instance) Notice {
			return Notice{Kind: string(cloudprovider.InstanceTerminating), Deadline: at, Message: "instance terminating", Ends: InstanceTerminated}
		})
	case simv1alpha1.EventKubeletStop, simv1alpha1.EventInstanceStop:
		c.stopLocked(ctx, e, matches)
	case simv1alpha1.EventCapacityChange:
		if e.Count != nil {
			for _, z := range c.zonesFor(e.Zone) {
				c.state.Pools[poolKey(e.InstanceType, z, e.CapacityType)] = *e.Count
			}
		}
	case simv1alpha1.EventSpotPriceChange:
		c.applySpotPriceLocked(e, at)
	case simv1alpha1.EventReservationExpired:
		if r := c.state.Reservations[e.ReservationID]; r != nil {
			r.End = at
		}
	case simv1alpha1.EventReservationConsumedExternally:
		// Another account can take only the slots this one does not hold.
		if r := c.state.Reservations[e.ReservationID]; r != nil && e.Count != nil {
			r.External = min(r.Total-r.Used, r.External+*e.Count)
		}
	}
}

// applySpotPriceLocked moves a spot price; running spot instances whose
// NodeClass (or own max price, see Launch) caps spot below the new price
// are interrupted (decision 4).
func (c *Cloud) applySpotPriceLocked(e simv1alpha1.CloudEvent, at time.Time) {
	price, err := strconv.ParseFloat(e.Price, 64)
	if err != nil || c.opts.Profile.Spec.Style == simv1alpha1.CloudStyleGCP {
		return
	}
	for _, z := range c.zonesFor(e.Zone) {
		c.state.SpotPrices[e.InstanceType+"/"+z] = price
	}
	for _, inst := range c.state.Instances {
		if inst.State != InstanceRunning || inst.CapacityType != v1.CapacityTypeSpot || inst.InstanceType != e.InstanceType {
			continue
		}
		if e.Zone != "*" && e.Zone != "" && inst.Zone != e.Zone {
			continue
		}
		ct, ok := c.catalog[inst.InstanceType]
		nc, err := c.opts.NodeClasses.SimNodeClass(context.Background(), inst.NodeClass)
		if !ok || err != nil {
			continue
		}
		od, _ := ct.OnDemandPrice(c.opts.Profile.Spec.Region)
		limit := c.maxSpotPrice(nc, od)
		if inst.MaxPrice > 0 {
			// The cap the launch itself gave (Launch) is the one that holds.
			limit = inst.MaxPrice
		}
		if price > limit {
			d, ends, _ := c.spotNotice(inst)
			inst.Notices = append(inst.Notices, Notice{Kind: string(cloudprovider.SpotPriceAboveMax), Deadline: at.Add(d), Message: "spot price rose above the max price", Ends: ends})
		}
	}
}

// Interruptions implements cloudprovider.InterruptionSource: every
// outstanding notice, repeated until its instance is gone. A GCP
// preemptible instance's 24-hour limit is reported from its launch: the
// limit is known then, and Capstan replaces the VM ahead of it.
func (c *Cloud) Interruptions(ctx context.Context) ([]cloudprovider.InterruptionNotice, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	release, err := c.syncLocked(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	var out []cloudprovider.InterruptionNotice
	for _, id := range slices.Sorted(maps.Keys(c.state.Instances)) {
		inst := c.state.Instances[id]
		if inst.State != InstanceRunning {
			continue
		}
		for _, n := range inst.Notices {
			out = append(out, cloudprovider.InterruptionNotice{
				Kind: cloudprovider.InterruptionKind(n.Kind), ProviderID: c.providerID(inst),
				InstanceType: inst.InstanceType, Zone: inst.Zone, Deadline: n.Deadline, Message: n.Message,
			})
		}
	}
	return out, nil
}

// ScaleEvents are the profile's Scale events, for `capstan simulate`.
func (c *Cloud) ScaleEvents() []simv1alpha1.CloudEvent {
	var out []simv1alpha1.CloudEvent
	for _, e := range c.opts.Profile.Spec.Events {
		if e.Type == simv1alpha1.EventScale {
			out = append(out, e)
		}
	}
	return out
}
