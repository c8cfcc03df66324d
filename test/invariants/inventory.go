package invariants

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// Instance is one machine of the simulated cloud's inventory, as much as
// the checker reads of it.
type Instance struct {
	ID           string    `json:"id"`
	InstanceType string    `json:"instanceType"`
	Zone         string    `json:"zone"`
	CapacityType string    `json:"capacityType"`
	NodeClaim    string    `json:"nodeClaim"`
	LaunchTime   time.Time `json:"launchTime"`
	// State is running, stopped or terminated.
	State string `json:"state"`
}

// InstanceRunning is the state of an instance that runs.
const InstanceRunning = "running"

// ProviderID is the instance's id as its NodeClaim carries it.
func (i Instance) ProviderID() string { return "sim://" + i.Zone + "/" + i.ID }

func (i Instance) String() string {
	return fmt.Sprintf("instance %s (%s %s %s, nodeclaim %s, launched %s, %s)", i.ID, i.InstanceType, i.CapacityType, i.Zone,
		i.NodeClaim, i.LaunchTime.Format("15:04:05"), i.State)
}

// Inventory is the simulated cloud's state file, as much as the checker
// reads of it: its instances by id, terminated ones included.
type Inventory struct {
	Instances map[string]Instance `json:"instances"`
}

// ReadInventory reads the simulated cloud's state file. The cloud
// replaces it atomically, but an error (a file half written by other
// means, or not yet written) only means this reading is to be skipped.
func ReadInventory(path string) (*Inventory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the cloud's state %s, %w", path, err)
	}
	inv := &Inventory{}
	if err := json.Unmarshal(data, inv); err != nil {
		return nil, fmt.Errorf("parsing the cloud's state %s, %w", path, err)
	}
	if inv.Instances == nil {
		return nil, fmt.Errorf("parsing the cloud's state %s, %w", path, errors.New("it lists no instances"))
	}
	return inv, nil
}

// inventoryState is how long the cloud and the NodeClaims have disagreed
// and how many inventories were read.
type inventoryState struct {
	// orphaned are running instances without a NodeClaim, by id.
	orphaned disagreements
	// stranded are live NodeClaims without a running instance, by name.
	stranded disagreements
	// reads counts the inventories observed, err is the last failed read.
	reads int
	err   error
}

func newInventoryState() inventoryState {
	return inventoryState{orphaned: disagreements{}, stranded: disagreements{}}
}

// disagreements are when each disagreement started, by key, and whether
// it was reported.
type disagreements map[string]*disagreement

type disagreement struct {
	since    time.Time
	reported bool
}

// overdue notes that key disagrees at now and reports, the first time
// only, that it has for longer than period, and since when.
func (d disagreements) overdue(key string, now time.Time, period time.Duration) (time.Time, bool) {
	e := d[key]
	if e == nil {
		d[key] = &disagreement{since: now}
		return now, false
	}
	if e.reported || now.Sub(e.since) <= period {
		return e.since, false
	}
	e.reported = true
	return e.since, true
}

// keep forgets the disagreements that ended, those not in still: one that
// starts again counts from then.
func (d disagreements) keep(still map[string]bool) {
	for key := range d {
		if !still[key] {
			delete(d, key)
		}
	}
}

// ObserveInventory compares the cloud's inventory at now with the
// NodeClaims: a running instance of the NodePool (its NodeClaim named
// "<nodepool>-…") without a NodeClaim, or a NodeClaim not being deleted
// whose instance (by provider id) is missing or not running, for longer
// than Options.GCPeriod is a violation.
func (c *Checker) ObserveInventory(inv *Inventory, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.inventory
	s.reads++
	byProviderID := map[string]Instance{}
	orphaned, stranded := map[string]bool{}, map[string]bool{}
	for _, id := range slices.Sorted(maps.Keys(inv.Instances)) {
		inst := inv.Instances[id]
		byProviderID[inst.ProviderID()] = inst
		if inst.State != InstanceRunning || c.opts.NodePool == "" || !strings.HasPrefix(inst.NodeClaim, c.opts.NodePool+"-") {
			continue
		}
		if _, ok := c.claims[inst.NodeClaim]; ok {
			continue
		}
		orphaned[id] = true
		if since, overdue := s.orphaned.overdue(id, now, c.opts.GCPeriod); overdue {
			claim := "was never seen"
			if nc := c.last[inst.NodeClaim]; nc != nil {
				claim = "is gone; last seen as " + describeClaim(nc)
			}
			c.violate(now, "%s has run without a nodeclaim for %s (since %s), longer than garbage collection's %s; nodeclaim %s %s",
				inst, now.Sub(since).Round(time.Second), since.Format("15:04:05"), c.opts.GCPeriod, inst.NodeClaim, claim)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.claims)) {
		nc := c.claims[name]
		if nc.DeletionTimestamp != nil || nc.Status.ProviderID == "" {
			continue
		}
		inst, ok := byProviderID[nc.Status.ProviderID]
		if ok && inst.State == InstanceRunning {
			continue
		}
		stranded[name] = true
		if since, overdue := s.stranded.overdue(name, now, c.opts.GCPeriod); overdue {
			instance := "no instance"
			if ok {
				instance = inst.String()
			}
			c.violate(now, "nodeclaim %s is not being deleted, yet its instance has been missing or not running for %s (since %s), longer than garbage collection's %s: %s",
				describeClaim(nc), now.Sub(since).Round(time.Second), since.Format("15:04:05"), c.opts.GCPeriod, instance)
		}
	}
	s.orphaned.keep(orphaned)
	s.stranded.keep(stranded)
}

// inventoryFailed notes a failed read of the state file.
func (c *Checker) inventoryFailed(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inventory.err = err
}

// inventoryReads is how many inventories were observed and the last
// failed read's error.
func (c *Checker) inventoryReads() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inventory.reads, c.inventory.err
}
