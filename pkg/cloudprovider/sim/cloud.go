package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
)

// Name is the simulated cloud's provider name.
const Name = "sim"

// NodeClasses looks up SimNodeClasses: the controller reads them from the
// API server, `capstan simulate` from its manifests.
type NodeClasses interface {
	SimNodeClass(ctx context.Context, name string) (*simv1alpha1.SimNodeClass, error)
}

// Options configure a simulated cloud.
type Options struct {
	Profile *simv1alpha1.CloudProfile
	Catalog []catalog.InstanceType
	Clock   clock.Clock
	// StatePath is the inventory file; empty keeps the inventory in memory.
	StatePath   string
	NodeClasses NodeClasses
	// Kubelet registers the Nodes of launched instances.
	Kubelet Kubelet
	// Unavailable is the provisioner's unavailable-offerings cache, applied
	// to the offerings GetInstanceTypes returns.
	Unavailable *cloudprovider.UnavailableOfferings
	// LaunchPrices order a launch's candidates by the prices the solver
	// weighed (NodeOverlays applied); nil keeps list prices.
	LaunchPrices *cloudprovider.LaunchPrices
	// Naming names instances' provider IDs and Nodes; the zero value is
	// the sim's own.
	Naming Naming
}

// Naming is how a cloud names what it launches. A front end that serves
// the cloud as another cloud names them that cloud's way, so the Nodes
// its kubelet registers look like that cloud's: test/ec2endpoint uses
// aws:///<zone>/<instance id> and EC2's private DNS names.
type Naming struct {
	// ProviderID is an instance's spec.providerID; nil means
	// Instance.ProviderID (sim://<zone>/<instance id>).
	ProviderID func(*Instance) string
	// NodeName is the name of an instance's Node; nil means NodeName
	// (sim-<number>).
	NodeName func(*Instance) string
}

func (c *Cloud) providerID(inst *Instance) string {
	if c.opts.Naming.ProviderID != nil {
		return c.opts.Naming.ProviderID(inst)
	}
	return inst.ProviderID()
}

func (c *Cloud) nodeName(inst *Instance) string {
	if c.opts.Naming.NodeName != nil {
		return c.opts.Naming.NodeName(inst)
	}
	return NodeName(inst)
}

// Cloud is the simulated cloud. It is safe for concurrent use.
type Cloud struct {
	opts    Options
	catalog map[string]catalog.InstanceType
	// types are typeLocked's, by name.
	types map[string]*cloudprovider.InstanceType
	mu    sync.Mutex
	state *State
	// store is the state file; nil keeps the inventory in memory.
	store *store
	// pending are the side effects of the change in progress (a node
	// stopping), run once the change is saved and dropped if it is not.
	pending []func()
}

// New starts a simulated cloud, resuming the inventory in the state file
// when it exists.
func New(opts Options) (*Cloud, error) {
	if opts.Profile == nil || opts.Clock == nil || opts.NodeClasses == nil {
		return nil, errors.New("sim cloud needs a profile, a clock and node classes")
	}
	if opts.Kubelet == nil {
		opts.Kubelet = NewMemoryKubelet()
	}
	c := &Cloud{opts: opts, catalog: map[string]catalog.InstanceType{}, types: map[string]*cloudprovider.InstanceType{}}
	for _, it := range opts.Catalog {
		c.catalog[it.Name] = it
	}
	if opts.StatePath == "" {
		c.state = c.freshState(opts.Clock.Now())
		return c, nil
	}
	st, err := openStore(opts.StatePath)
	if err != nil {
		return nil, err
	}
	if err := c.open(st); err != nil {
		_ = st.close()
		return nil, err
	}
	return c, nil
}

// open reads the state file under its lock, or writes a fresh inventory
// when there is none.
func (c *Cloud) open(st *store) error {
	if err := st.acquire(); err != nil {
		return err
	}
	defer st.release()
	s, err := st.refresh()
	if err != nil {
		return err
	}
	if s == nil {
		s = c.freshState(c.opts.Clock.Now())
		if err := st.save(s); err != nil {
			return err
		}
	}
	c.state, c.store = s, st
	return nil
}

// Close releases the state file's lock file. The cloud must not be used
// after.
func (c *Cloud) Close() error {
	if c.store == nil {
		return nil
	}
	return c.store.close()
}

// beginLocked takes the state file's lock and re-reads the file when
// another cloud (a predecessor or the other replica) changed it. The
// caller holds c.mu and calls the returned release when done.
func (c *Cloud) beginLocked() (release func(), err error) {
	if c.store == nil {
		return func() {}, nil
	}
	if err := c.store.acquire(); err != nil {
		return nil, err
	}
	s, err := c.store.refresh()
	if err != nil {
		c.store.release()
		return nil, err
	}
	if s != nil {
		c.state = s
	}
	return c.store.release, nil
}

// syncLocked is beginLocked, then the events due by now, saved.
func (c *Cloud) syncLocked(ctx context.Context) (release func(), err error) {
	release, err = c.beginLocked()
	if err != nil {
		return nil, err
	}
	if err := c.advanceLocked(ctx); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// commitLocked saves the inventory, then runs the change's side effects.
// When the save fails it restores the inventory the file holds and drops
// the side effects, so memory and disk never disagree.
func (c *Cloud) commitLocked() error {
	pending := c.pending
	c.pending = nil
	if c.store != nil {
		if err := c.store.save(c.state); err != nil {
			s, lerr := c.store.lastSaved()
			if lerr != nil {
				// Cannot happen (it was read or written whole); should it,
				// the next operation re-reads the file whatever it holds.
				c.store.saved = nil
				return errors.Join(err, lerr)
			}
			c.state = s
			return err
		}
	}
	for _, f := range pending {
		f()
	}
	return nil
}

func (c *Cloud) freshState(now time.Time) *State {
	s := &State{Start: now, Instances: map[string]*Instance{}, Reservations: map[string]*Reservation{}, Pools: map[string]int{}, SpotPrices: map[string]float64{}}
	spec := c.opts.Profile.Spec
	for _, p := range spec.Capacity {
		s.Pools[poolKey(p.InstanceType, p.Zone, p.CapacityType)] = p.Count
	}
	for _, r := range spec.Reservations {
		res := &Reservation{ID: r.ID, InstanceType: r.InstanceType, Zone: r.Zone, Type: r.Type, OwnerID: r.OwnerID, Tags: r.Tags, Total: r.Count, CapacityBlock: r.CapacityBlock, Interruptible: r.Interruptible}
		if r.StartTime != nil {
			res.Start = now.Add(r.StartTime.Duration)
		}
		if r.EndTime != nil {
			res.End = now.Add(r.EndTime.Duration)
		}
		s.Reservations[r.ID] = res
	}
	for _, sp := range spec.SpotPrices {
		var price float64
		if _, err := fmt.Sscanf(sp.Price, "%g", &price); err != nil {
			continue
		}
		for _, z := range c.zonesFor(sp.Zone) {
			s.SpotPrices[sp.InstanceType+"/"+z] = price
		}
	}
	return s
}

func (c *Cloud) zonesFor(zone string) []string {
	if zone == "*" {
		return c.opts.Profile.Spec.Zones
	}
	return []string{zone}
}

// Name implements CloudProvider.
func (c *Cloud) Name() string { return Name }

// GetSupportedNodeClasses implements CloudProvider.
func (c *Cloud) GetSupportedNodeClasses() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{simv1alpha1.SchemeGroupVersion.WithKind(simv1alpha1.SimNodeClassKind)}
}

// Snapshot returns a copy of the inventory, for tests and `simulate`.
// When the state file cannot be read or written it returns the inventory
// as last saved; the cloud's next operation returns the error.
func (c *Cloud) Snapshot() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	if release, err := c.syncLocked(context.Background()); err == nil {
		defer release()
	}
	out := *c.state
	out.Instances = map[string]*Instance{}
	for id, i := range c.state.Instances {
		cp := *i
		cp.Tags, cp.Attributes = maps.Clone(i.Tags), maps.Clone(i.Attributes)
		out.Instances[id] = &cp
	}
	out.Reservations = map[string]*Reservation{}
	for id, r := range c.state.Reservations {
		cp := *r
		out.Reservations[id] = &cp
	}
	out.Pools = maps.Clone(c.state.Pools)
	out.SpotPrices = maps.Clone(c.state.SpotPrices)
	out.FaultsFired = maps.Clone(c.state.FaultsFired)
	return out
}

// Reservations returns a copy of the reservations at the cloud's now, for
// the SimNodeClass controller.
// Like Snapshot, it returns the reservations as last saved when the state
// file cannot be read or written.
func (c *Cloud) Reservations() []Reservation {
	c.mu.Lock()
	defer c.mu.Unlock()
	if release, err := c.syncLocked(context.Background()); err == nil {
		defer release()
	}
	return c.reservationsLocked()
}

func (c *Cloud) reservationsLocked() []Reservation {
	out := make([]Reservation, 0, len(c.state.Reservations))
	for _, r := range c.state.Reservations {
		out = append(out, *r)
	}
	return out
}

func (c *Cloud) nodeClass(ctx context.Context, name string) (*simv1alpha1.SimNodeClass, error) {
	nc, err := c.opts.NodeClasses.SimNodeClass(ctx, name)
	if err != nil {
		return nil, cloudprovider.NewNodeClassNotReadyError(name, err)
	}
	return nc, nil
}
