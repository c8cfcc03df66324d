package sim

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// candidate is an offering a launch may try.
type candidate struct {
	it *cloudprovider.InstanceType
	o  *cloudprovider.Offering
	// onDemand is the type's on-demand price, the default spot cap.
	onDemand float64
	// offering is the explicit launch's offering this is (see Launch),
	// nil for Create's.
	offering *LaunchOffering
}

// Create implements CloudProvider. Within the first capacity type the
// NodeClaim allows that has an offering, it tries offerings in order
// (reserved and on-demand by price; spot price-capacity-optimized: by
// price, larger pools first) and launches into the first with capacity;
// when none has any it returns an InsufficientCapacityError naming every
// offering tried with the cloud's error code. It never falls through to
// the next capacity type: the provisioner marks the offerings and plans
// again, which is how fallback stays visible and fast.
//
// The instance records the hash of its SimNodeClass's static fields
// (NodeClassHash), which IsDrifted compares later; the NodeClaim returned
// shows it as the NodeClassHashAnnotationKey annotation (and its version
// as NodeClassHashVersionAnnotationKey), as do those Get and List return.
func (c *Cloud) Create(ctx context.Context, nc *v1.NodeClaim) (*v1.NodeClaim, error) {
	if err := cloudprovider.CheckNodeClassRef(c, nc.Spec.NodeClassRef); err != nil {
		return nil, err
	}
	nodeClass, err := c.nodeClass(ctx, nc.Spec.NodeClassRef.Name)
	if err != nil {
		return nil, err
	}
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(nc.Spec.Requirements...)

	c.mu.Lock()
	defer c.mu.Unlock()
	release, err := c.syncLocked(ctx)
	if err != nil {
		return nil, cloudprovider.NewCreateError("StateFileUnavailable", err)
	}
	defer release()
	// A retried Create (the caller crashed or timed out after the launch)
	// gets the instance already running for the NodeClaim, not a second.
	if inst := c.launchedForLocked(nc.Name); inst != nil {
		return c.launchedClaim(inst, c.typeLocked(inst.InstanceType), nc), nil
	}
	now := c.opts.Clock.Now()
	// Only the types the NodeClaim allows are built: the rest would fail
	// its instance-type requirement in LaunchCandidates anyway.
	its := c.instanceTypesLocked(nodeClass, now, reqs.Get(v1.LabelInstanceType).Has)
	if c.opts.Unavailable != nil {
		its = c.opts.Unavailable.Apply(its)
	}
	if ct, shared := cloudprovider.LaunchCandidates(its, reqs, nc.Spec.Resources.Requests); len(shared) > 0 {
		c.opts.LaunchPrices.Order(nc.Labels[v1.NodePoolLabelKey], shared)
		cands := make([]candidate, len(shared))
		for i, sc := range shared {
			cands[i] = candidate{it: sc.InstanceType, o: sc.Offering, onDemand: sc.OnDemandPrice}
		}
		if ct == v1.CapacityTypeSpot {
			c.orderLocked(cands, AllocationPriceCapacityOptimized)
		}
		inst, cand, failed, err := c.launchLocked(ctx, launch{nc: nc, nodeClass: nodeClass, now: now}, cands, nil)
		if err != nil {
			return nil, err
		}
		// What failed for capacity before the launch is marked as a failed
		// launch's would be: no error carries it to the caller's cache.
		if len(failed) > 0 && c.opts.Unavailable != nil {
			c.opts.Unavailable.MarkFromError(cloudprovider.NewLaunchError(failed, nil))
		}
		return c.launchedClaim(inst, cand.it, nc), nil
	}
	return nil, cloudprovider.NoLaunchCandidates(nc.Name, its, reqs, nc.Spec.Resources.Requests)
}

// launchedForLocked is the instance running (or stopped) for the
// NodeClaim named name, nil when there is none.
// The lowest id wins if there are several, in one pass without sorting
// the ids: a Create costs no sort of every instance.
func (c *Cloud) launchedForLocked(name string) *Instance {
	var found *Instance
	foundID := ""
	for id, inst := range c.state.Instances {
		if inst.NodeClaim == name && inst.State != InstanceTerminated && (found == nil || id < foundID) {
			found, foundID = inst, id
		}
	}
	return found
}

// launch is what a launch records beyond the offering: the NodeClaim and
// NodeClass it is for, and its time.
type launch struct {
	nc        *v1.NodeClaim
	nodeClass *simv1alpha1.SimNodeClass
	now       time.Time
}

// launchLocked launches into the first candidate with capacity that no
// launch fault refuses, trying them in the order given, and returns the
// instance and that candidate. Every candidate tried before it is added
// to failed with the cloud's error code; when none launches, the error is
// cloudprovider.NewLaunchError's for them all.
func (c *Cloud) launchLocked(ctx context.Context, l launch, cands []candidate, failed []cloudprovider.OfferingError) (*Instance, candidate, []cloudprovider.OfferingError, error) {
	fail := func(cand candidate, code, msg string) {
		failed = append(failed, cloudprovider.OfferingError{Offering: cand.o.Key(cand.it.Name), Code: code, Message: msg})
	}
	fired := map[int]bool{}
	if limit := c.opts.Profile.Spec.MaxSpotInstances; limit > 0 && cands[0].o.CapacityType == v1.CapacityTypeSpot && c.runningSpotLocked() >= limit {
		for _, cand := range cands {
			fail(cand, string(cloudprovider.CodeMaxSpotInstanceCountExceeded), "")
		}
		return nil, candidate{}, failed, cloudprovider.NewLaunchError(failed, fmt.Errorf("launching nodeclaim %s: the account runs its maximum of %d spot instances", l.nc.Name, limit))
	}
	learned := false
	for _, cand := range cands {
		if i, f := c.faultLocked(l, cand); f != nil {
			fail(cand, f.Code, f.Message)
			fired[i] = true
			continue
		}
		switch {
		case cand.o.CapacityType == v1.CapacityTypeSpot && cand.o.Price > c.spotCap(l.nodeClass, cand):
			fail(cand, string(cloudprovider.CodeSpotMaxPriceTooLow), "")
			continue
		case cand.o.ReservationID != "":
			// Offerings advertise what the account last saw; the true
			// count decides, and the failure is how the account learns
			// that another account took the slots.
			r := c.state.Reservations[cand.o.ReservationID]
			if r == nil || r.Available() <= 0 || !r.Active(l.now) {
				fail(cand, string(cloudprovider.CodeReservationCapacityExceeded), "")
				if r != nil && r.observe() {
					learned = true
				}
				continue
			}
		default:
			if c.poolDepthLocked(cand) == 0 {
				fail(cand, string(cloudprovider.CodeInsufficientInstanceCapacity), "")
				continue
			}
		}
		c.faultsFiredLocked(fired)
		inst, err := c.runLocked(ctx, l, cand)
		return inst, cand, failed, err
	}
	err := cloudprovider.NewLaunchError(failed, fmt.Errorf("launching nodeclaim %s: no %s offering launched", l.nc.Name, cands[0].o.CapacityType))
	if learned || len(fired) > 0 {
		c.faultsFiredLocked(fired)
		// What the account learned, and the faults' counts, are kept only
		// if they are saved.
		if err := c.commitLocked(); err != nil {
			return nil, candidate{}, failed, cloudprovider.NewCreateError("StateWriteFailed", err)
		}
	}
	return nil, candidate{}, failed, err
}

// spotCap is the most a spot candidate may cost: its own cap when an
// explicit launch gave one, else the NodeClass's.
func (c *Cloud) spotCap(nodeClass *simv1alpha1.SimNodeClass, cand candidate) float64 {
	if cand.offering != nil && cand.offering.MaxPrice > 0 {
		return cand.offering.MaxPrice
	}
	return c.maxSpotPrice(nodeClass, cand.onDemand)
}

func (c *Cloud) runningSpotLocked() int {
	n := 0
	for _, inst := range c.state.Instances {
		if inst.State == InstanceRunning && inst.CapacityType == v1.CapacityTypeSpot {
			n++
		}
	}
	return n
}

// poolDepthLocked is a pool's remaining count, MaxInt when unlimited.
func (c *Cloud) poolDepthLocked(cand candidate) int {
	if n, ok := c.state.Pools[poolKey(cand.it.Name, cand.o.Zone, cand.o.CapacityType)]; ok {
		return n
	}
	return math.MaxInt
}

func (c *Cloud) runLocked(ctx context.Context, l launch, cand candidate) (*Instance, error) {
	key := poolKey(cand.it.Name, cand.o.Zone, cand.o.CapacityType)
	if n, ok := c.state.Pools[key]; ok {
		c.state.Pools[key] = n - 1
	}
	if cand.o.ReservationID != "" {
		c.state.Reservations[cand.o.ReservationID].Used++
	}
	c.state.NextID++
	inst := &Instance{
		ID: fmt.Sprintf("i-%012x", c.state.NextID), InstanceType: cand.it.Name, Zone: cand.o.Zone,
		CapacityType: cand.o.CapacityType, ReservationID: cand.o.ReservationID, Price: cand.o.Price,
		NodeClaim: l.nc.Name, NodeClass: l.nodeClass.Name, LaunchTime: l.now, State: InstanceRunning,
		NodeClassHash: NodeClassHash(l.nodeClass.Spec), NodeClassHashVersion: NodeClassHashVersion,
	}
	if o := cand.offering; o != nil {
		inst.Tags, inst.Attributes, inst.MaxPrice = maps.Clone(o.Tags), maps.Clone(o.Attributes), o.MaxPrice
	}
	inst.Labels = c.instanceLabels(cand, inst)
	if c.opts.Profile.Spec.Style == simv1alpha1.CloudStyleGCP && inst.CapacityType == v1.CapacityTypeSpot {
		// Preemptible VMs live at most 24 hours.
		inst.Notices = append(inst.Notices, Notice{Kind: string(cloudprovider.PreemptibleMaxLifetime), Deadline: l.now.Add(PreemptibleMaxLifetime), Message: "preemptible instance reaches its 24h limit", Ends: InstanceTerminated})
	}
	c.state.Instances[inst.ID] = inst
	// The inventory is durable before the caller hears of the instance: a
	// crash from here on leaks an instance garbage collection can find.
	// When the save fails commitLocked restores the pools, reservation use
	// and ids as the file holds them, and nothing launches.
	if err := c.commitLocked(); err != nil {
		return nil, cloudprovider.NewCreateError("StateWriteFailed", err)
	}
	c.opts.Kubelet.Launch(ctx, c.node(inst, l.nc, cand.it), l.now.Add(c.opts.Profile.Spec.LaunchLatency.Duration))
	return inst, nil
}

// launchedClaim is the NodeClaim Create returns: nc with the instance's
// status, its labels and the NodeClass hash annotations added.
func (c *Cloud) launchedClaim(inst *Instance, it *cloudprovider.InstanceType, nc *v1.NodeClaim) *v1.NodeClaim {
	out := c.toNodeClaim(inst, it)
	out.Name, out.Spec = nc.Name, nc.Spec
	hash := out.Annotations
	out.Annotations = maps.Clone(nc.Annotations)
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	maps.Copy(out.Annotations, hash)
	out.Labels = maps.Clone(nc.Labels)
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	maps.Copy(out.Labels, inst.Labels)
	return out
}

func (c *Cloud) instanceLabels(cand candidate, inst *Instance) map[string]string {
	labels := cand.it.Requirements.Labels()
	labels[v1.LabelZone] = inst.Zone
	labels[v1.LabelZoneID] = cand.o.ZoneID
	labels[v1.CapacityTypeLabelKey] = inst.CapacityType
	labels[v1.LabelRegion] = c.opts.Profile.Spec.Region
	labels[v1.LabelInstanceType] = inst.InstanceType
	maps.Copy(labels, cand.o.ReservationLabels())
	if inst.CapacityType == v1.CapacityTypeSpot {
		labels[v1.InterruptibleLabelKey] = "true"
	}
	return labels
}

func (c *Cloud) toNodeClaim(inst *Instance, it *cloudprovider.InstanceType) *v1.NodeClaim {
	nc := &v1.NodeClaim{}
	nc.Name = inst.NodeClaim
	nc.CreationTimestamp = metav1.NewTime(inst.LaunchTime)
	nc.Labels = maps.Clone(inst.Labels)
	if inst.NodeClassHash != "" {
		nc.Annotations = map[string]string{
			NodeClassHashAnnotationKey:        inst.NodeClassHash,
			NodeClassHashVersionAnnotationKey: inst.NodeClassHashVersion,
		}
	}
	nc.Status.ProviderID = c.providerID(inst)
	nc.Status.ImageID = "sim-image-1"
	if it != nil {
		nc.Status.Capacity = it.Capacity.DeepCopy()
		nc.Status.Allocatable = it.Allocatable()
	}
	return nc
}

// node is the Node the instance's kubelet registers: the instance's and
// NodeClaim's labels, the NodeClaim's taints and startup taints, and the
// unregistered taint Capstan removes once it has synced the node.
func (c *Cloud) node(inst *Instance, nc *v1.NodeClaim, it *cloudprovider.InstanceType) *corev1.Node {
	n := &corev1.Node{}
	n.Name = c.nodeName(inst)
	n.Labels = maps.Clone(nc.Labels)
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	maps.Copy(n.Labels, inst.Labels)
	n.Labels[corev1.LabelHostname] = n.Name
	n.Labels[simv1alpha1.LabelKubelet] = simv1alpha1.KubeletKwok
	n.Spec.ProviderID = c.providerID(inst)
	n.Spec.Taints = append(slices.Clone(nc.Spec.Taints), nc.Spec.StartupTaints...)
	n.Spec.Taints = append(n.Spec.Taints, v1.UnregisteredNoExecuteTaint())
	n.Status.Capacity = it.Capacity.DeepCopy()
	n.Status.Allocatable = it.Allocatable()
	return n
}

// NodeName is the name of an instance's Node.
func NodeName(inst *Instance) string { return "sim-" + inst.ID[2:] }

// Delete implements CloudProvider.
func (c *Cloud) Delete(ctx context.Context, nc *v1.NodeClaim) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	release, err := c.syncLocked(ctx)
	if err != nil {
		return err
	}
	defer release()
	inst := c.byProviderIDLocked(nc.Status.ProviderID)
	if inst == nil || inst.State == InstanceTerminated {
		return cloudprovider.NewNodeClaimNotFoundError(nc.Status.ProviderID, nil)
	}
	c.terminateLocked(ctx, inst)
	// When the save fails the instance runs on, as the file says.
	if err := c.commitLocked(); err != nil {
		return fmt.Errorf("terminating instance %s, %w", inst.ID, err)
	}
	return nil
}

func (c *Cloud) terminateLocked(ctx context.Context, inst *Instance) {
	if inst.State == InstanceRunning || inst.State == InstanceStopped {
		key := poolKey(inst.InstanceType, inst.Zone, inst.CapacityType)
		if n, ok := c.state.Pools[key]; ok {
			c.state.Pools[key] = n + 1
		}
		if r := c.state.Reservations[inst.ReservationID]; r != nil && r.Used > 0 {
			r.Used--
		}
	}
	inst.State = InstanceTerminated
	inst.Notices = nil
	c.stopNodeLocked(ctx, c.nodeName(inst))
}

// stopNodeLocked stops an instance's node once the change is saved.
func (c *Cloud) stopNodeLocked(ctx context.Context, name string) {
	c.pending = append(c.pending, func() { c.opts.Kubelet.Stop(ctx, name) })
}

func (c *Cloud) byProviderIDLocked(providerID string) *Instance {
	// Provider IDs end in the instance id (Naming): looked up first, so
	// finding an instance does not cost a pass over all of them.
	if i := strings.LastIndexByte(providerID, '/'); i >= 0 {
		if inst := c.state.Instances[providerID[i+1:]]; inst != nil && c.providerID(inst) == providerID {
			return inst
		}
	}
	for _, inst := range c.state.Instances {
		if c.providerID(inst) == providerID {
			return inst
		}
	}
	return nil
}

// Get implements CloudProvider.
func (c *Cloud) Get(ctx context.Context, providerID string) (*v1.NodeClaim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	release, err := c.syncLocked(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	inst := c.byProviderIDLocked(providerID)
	if inst == nil || inst.State == InstanceTerminated {
		return nil, cloudprovider.NewNodeClaimNotFoundError(providerID, nil)
	}
	return c.toNodeClaim(inst, c.typeLocked(inst.InstanceType)), nil
}

// List implements CloudProvider: running and stopped (still billed)
// instances.
func (c *Cloud) List(ctx context.Context) ([]*v1.NodeClaim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	release, err := c.syncLocked(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	var out []*v1.NodeClaim
	for _, id := range slices.Sorted(maps.Keys(c.state.Instances)) {
		inst := c.state.Instances[id]
		if inst.State != InstanceTerminated {
			out = append(out, c.toNodeClaim(inst, c.typeLocked(inst.InstanceType)))
		}
	}
	return out, nil
}

// typeLocked is the named catalog type without offerings, built once:
// List calls it for every instance, and the catalog and region do not
// change. Callers only read it.
func (c *Cloud) typeLocked(name string) *cloudprovider.InstanceType {
	if it, ok := c.types[name]; ok {
		return it
	}
	ct, ok := c.catalog[name]
	if !ok {
		return nil
	}
	it := c.instanceType(ct)
	c.types[name] = it
	return it
}

// Reregister has the kubelet register, again, the Node of nodeClaim's
// instance if it runs: a Node's registration is in flight in the process
// that launched it (simapi.Kubelet waits out the launch latency), so a
// controller that died in that window would leave the instance running
// with no Node for ever. A Node that exists is left as it is. The caller
// passes launched NodeClaims whose Node has not registered.
func (c *Cloud) Reregister(ctx context.Context, nodeClaim *v1.NodeClaim) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	release, err := c.syncLocked(ctx)
	if err != nil {
		return err
	}
	defer release()
	inst := c.byProviderIDLocked(nodeClaim.Status.ProviderID)
	if inst == nil || inst.State != InstanceRunning {
		return nil
	}
	it := c.typeLocked(inst.InstanceType)
	if it == nil {
		return nil
	}
	c.opts.Kubelet.Launch(ctx, c.node(inst, nodeClaim, it), inst.LaunchTime.Add(c.opts.Profile.Spec.LaunchLatency.Duration))
	return nil
}
