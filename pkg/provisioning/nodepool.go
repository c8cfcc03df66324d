package provisioning

import (
	"cmp"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// itData is an instance type with its resources precomputed, as a node of
// one NodePool would have it.
type itData struct {
	it *cloudprovider.InstanceType
	// alloc is what pods may use: allocatable less what the daemonsets
	// that would run on this instance type request.
	alloc    scheduling.Resources
	capacity scheduling.Resources
	// daemon is those daemonsets' requests, daemonPorts their host ports.
	daemon      scheduling.Resources
	daemonPorts []scheduling.HostPort
	// price is the cheapest available offering's, +Inf if none.
	price float64
	// id is the type's place in its NodePool's price order.
	id uint64
}

// poolData is a NodePool prepared for the solve.
type poolData struct {
	np   *v1.NodePool
	name string
	// reqs are the template's requirements, its labels and the NodePool
	// label.
	reqs   scheduling.Requirements
	labels map[string]string
	taints []corev1.Taint
	// its are the instance types, cheapest available offering first, and
	// crowded those the daemonsets leave no room on (poolTypes, shared
	// with the NodePools of the same types and daemonsets: read-only);
	// allowed are those the NodePool's own requirements allow, for a pod
	// that adds none (filter with no requests and no slot accounting,
	// which only bookCapacity applies).
	its, crowded, allowed []*itData
	// limit is what the NodePool may still add: its limits less existing,
	// in-flight and planned nodes (math.MaxInt64 where unlimited).
	limit      scheduling.Resources
	limitNodes int64
	// limited names the extended resources the limits list.
	limited sets.Set[corev1.ResourceName]
}

func newPoolData(np *v1.NodePool, its []*cloudprovider.InstanceType, memo *typesMemo) *poolData {
	p := &poolData{np: np, name: np.Name, taints: np.Spec.Template.Spec.Taints}
	p.reqs = scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
	p.reqs.Add(selectorRequirements(scheduling.NewLabelRequirements(np.Spec.Template.ObjectMeta.Labels))...)
	p.reqs.Add(scheduling.NewRequirement(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, np.Name))
	p.labels = map[string]string{v1.NodePoolLabelKey: np.Name}
	for k, v := range np.Spec.Template.ObjectMeta.Labels {
		p.labels[k] = v
	}
	types := memo.of(p, its)
	p.its, p.crowded = types.its, types.crowded
	p.allowed = filter(p.its, p.reqs, scheduling.Resources{}, "", nil).options
	p.limit, p.limitNodes, p.limited = limitsOf(np.Spec.Limits)
	return p
}

func cheapestAvailable(it *cloudprovider.InstanceType) float64 {
	best := math.Inf(1)
	for _, o := range it.Offerings {
		if o.IsAvailable() && o.Price < best {
			best = o.Price
		}
	}
	return best
}

// runsDaemon reports whether a daemonset's pod would run on this
// NodePool's nodes: it tolerates the taints (startup taints included, as
// daemonsets usually must) and its affinity fits the template.
func (p *poolData) runsDaemon(d *podData, wellKnown sets.Set[string]) bool {
	if scheduling.Tolerates(d.pod.Spec.Tolerations, p.taints) != nil {
		return false
	}
	if scheduling.Tolerates(d.pod.Spec.Tolerations, p.np.Spec.Template.Spec.StartupTaints) != nil {
		return false
	}
	for _, v := range d.variants {
		if p.reqs.Compatible(v.reqs, wellKnown) == nil {
			return true
		}
	}
	return false
}

// withoutPortConflicts drops, in place, the instance types on which a
// daemonset holds one of ports.
func withoutPortConflicts(options []*itData, ports []scheduling.HostPort) []*itData {
	if len(ports) == 0 {
		return options
	}
	return slices.DeleteFunc(options, func(it *itData) bool { return scheduling.PortsConflict(it.daemonPorts, ports) })
}

// limitsOf converts a NodePool's limits. Not scheduling.NewResources:
// unlisted resources must be unlimited (math.MaxInt64), a zero extended
// limit ("no GPUs") must be kept, and "nodes" is a count of nodes.
func limitsOf(limits v1.Limits) (scheduling.Resources, int64, sets.Set[corev1.ResourceName]) {
	r := scheduling.Resources{CPU: math.MaxInt64, Memory: math.MaxInt64, Storage: math.MaxInt64, Pods: math.MaxInt64}
	nodes := int64(math.MaxInt64)
	limited := sets.New[corev1.ResourceName]()
	for name, q := range limits {
		switch name {
		case corev1.ResourceCPU:
			r.CPU = scheduling.MilliValue(q)
		case corev1.ResourceMemory:
			r.Memory = scheduling.Value(q)
		case corev1.ResourceEphemeralStorage:
			r.Storage = scheduling.Value(q)
		case corev1.ResourcePods:
			r.Pods = scheduling.Value(q)
		case ResourceNodes:
			nodes = scheduling.Value(q)
		default:
			limited.Insert(name)
			r.Extended = append(r.Extended, scheduling.Extended{Name: name, Value: scheduling.Value(q)})
		}
	}
	slices.SortFunc(r.Extended, func(a, b scheduling.Extended) int { return cmp.Compare(a.Name, b.Name) })
	return r, nodes, limited
}

// consume charges capacity (of an existing or planned node) to the limits.
func (p *poolData) consume(capacity scheduling.Resources, nodes int64) {
	p.limit = subLimited(p.limit, capacity, p.limited)
	if p.limitNodes != math.MaxInt64 {
		p.limitNodes -= nodes
	}
}

// release returns capacity to the limits.
func (p *poolData) release(capacity scheduling.Resources, nodes int64) {
	neg := scheduling.Resources{}.Sub(capacity)
	p.consume(neg, -nodes)
}

// withinLimits reports whether a node of this capacity fits the limits
// left.
func (p *poolData) withinLimits(capacity scheduling.Resources) bool {
	return p.limitNodes >= 1 && fitsLimit(capacity, p.limit)
}

// affords reports whether a planned node holding held could hold
// capacity instead.
func (p *poolData) affords(capacity, held scheduling.Resources) bool {
	return fitsLimit(capacity, subLimited(p.limit, scheduling.Resources{}.Sub(held), p.limited))
}

func fitsLimit(capacity, l scheduling.Resources) bool {
	if capacity.CPU > l.CPU || capacity.Memory > l.Memory || capacity.Storage > l.Storage || capacity.Pods > l.Pods {
		return false
	}
	for _, e := range l.Extended {
		if capacity.Get(e.Name) > e.Value {
			return false
		}
	}
	return true
}

// subLimited subtracts only where a limit is set, so unlimited stays
// math.MaxInt64.
func subLimited(limit, capacity scheduling.Resources, limited sets.Set[corev1.ResourceName]) scheduling.Resources {
	sub := func(l, c int64) int64 {
		if l == math.MaxInt64 {
			return l
		}
		return l - c
	}
	out := scheduling.Resources{
		CPU: sub(limit.CPU, capacity.CPU), Memory: sub(limit.Memory, capacity.Memory),
		Storage: sub(limit.Storage, capacity.Storage), Pods: sub(limit.Pods, capacity.Pods),
	}
	for _, e := range limit.Extended {
		if limited.Has(e.Name) {
			e.Value -= capacity.Get(e.Name)
		}
		out.Extended = append(out.Extended, e)
	}
	return out
}

// orderPools sorts NodePools by weight, highest first, then name.
func orderPools(pools []*poolData) {
	slices.SortStableFunc(pools, func(a, b *poolData) int {
		wa, wb := int32(0), int32(0)
		if a.np.Spec.Weight != nil {
			wa = *a.np.Spec.Weight
		}
		if b.np.Spec.Weight != nil {
			wb = *b.np.Spec.Weight
		}
		return cmp.Or(cmp.Compare(wb, wa), cmp.Compare(a.name, b.name))
	})
}
