package overlay

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// build returns each pool's instance types with its updates applied,
// sharing what it can, because the reference's users report 20–30% more
// controller memory with broad overlays and Capstan's stays under 10%
// (docs/overlay.md, "Memory"):
//   - a NodePool no overlay touches keeps the cloud's slice, and an
//     instance type no overlay changes is the cloud's own value;
//   - a changed one copies the struct, its offerings slice and only the
//     offerings whose price changed (the rest, its requirements and its
//     overhead are shared), and its capacity only when an overlay adds
//     resources, one map for every instance type with the same result;
//   - NodePools with the same instance types and the same updates (an
//     overlay that does not select by NodePool) share one slice;
//   - the copies are allocated together, a few slabs rather than an
//     object each.
func build(pools []*pool) map[string][]*cloudprovider.InstanceType {
	out := make(map[string][]*cloudprovider.InstanceType, len(pools))
	type todo struct {
		it  *cloudprovider.InstanceType
		u   *typeUpdate
		key typeKey
	}
	type pending struct {
		p    *pool
		keys []string
		key  sliceKey
	}
	var types []todo
	var slicesTodo []pending
	seenType, seenSlice := map[typeKey]bool{}, map[sliceKey]bool{}
	nOfferings, nPointers, nSlices := 0, 0, 0
	for _, p := range pools {
		if len(p.updates) == 0 {
			out[p.name] = p.its
			continue
		}
		keys := make([]string, len(p.its))
		var all strings.Builder
		for _, i := range slices.Sorted(maps.Keys(p.updates)) {
			keys[i] = p.updates[i].key()
			fmt.Fprintf(&all, "%d{%s}", i, keys[i])
		}
		sk := sliceKey{first: &p.its[0], n: len(p.its), updates: all.String()}
		slicesTodo = append(slicesTodo, pending{p: p, keys: keys, key: sk})
		if seenSlice[sk] {
			continue
		}
		seenSlice[sk] = true
		nSlices += len(p.its)
		for i, u := range p.updates {
			tk := typeKey{it: p.its[i], updates: keys[i]}
			if seenType[tk] {
				continue
			}
			seenType[tk] = true
			types = append(types, todo{it: p.its[i], u: u, key: tk})
			if len(u.prices) > 0 {
				nOfferings += len(u.prices)
				nPointers += len(p.its[i].Offerings)
			}
		}
	}
	s := slabs{
		types:     make([]cloudprovider.InstanceType, len(types)),
		offerings: make([]cloudprovider.Offering, nOfferings),
		pointers:  make([]*cloudprovider.Offering, nPointers),
		slices:    make([]*cloudprovider.InstanceType, nSlices),
		capacity:  map[string]corev1.ResourceList{},
	}
	adjusted := make(map[typeKey]*cloudprovider.InstanceType, len(types))
	for i, t := range types {
		adjusted[t.key] = s.apply(&s.types[i], t.u, t.it)
	}
	built := map[sliceKey][]*cloudprovider.InstanceType{}
	for _, pd := range slicesTodo {
		if b, ok := built[pd.key]; ok {
			out[pd.p.name] = b
			continue
		}
		b := s.slices[:len(pd.p.its):len(pd.p.its)]
		s.slices = s.slices[len(pd.p.its):]
		for i, it := range pd.p.its {
			if pd.p.updates[i] == nil {
				b[i] = it
				continue
			}
			b[i] = adjusted[typeKey{it: it, updates: pd.keys[i]}]
		}
		built[pd.key] = b
		out[pd.p.name] = b
	}
	return out
}

type typeKey struct {
	it      *cloudprovider.InstanceType
	updates string
}

type sliceKey struct {
	first   **cloudprovider.InstanceType
	n       int
	updates string
}

// slabs are the memory the copies are carved from, sized exactly.
type slabs struct {
	types     []cloudprovider.InstanceType
	offerings []cloudprovider.Offering
	pointers  []*cloudprovider.Offering
	slices    []*cloudprovider.InstanceType
	// capacity are the adjusted capacities, by content.
	capacity map[string]corev1.ResourceList
}

// key identifies the update's effect: two equal keys adjust an instance
// type alike.
func (u *typeUpdate) key() string {
	var b strings.Builder
	for _, j := range slices.Sorted(maps.Keys(u.prices)) {
		fmt.Fprintf(&b, "%d:%+v;", j, u.prices[j].change)
	}
	b.WriteString(resourcesKey(u.capacity))
	return b.String()
}

func resourcesKey(rl corev1.ResourceList) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(rl)) {
		q := rl[name]
		fmt.Fprintf(&b, "%s=%s;", name, q.String())
	}
	return b.String()
}

// apply fills out with it under the update, copy-on-write.
func (s *slabs) apply(out *cloudprovider.InstanceType, u *typeUpdate, it *cloudprovider.InstanceType) *cloudprovider.InstanceType {
	*out = *it
	if len(u.prices) > 0 {
		n := len(it.Offerings)
		out.Offerings = s.pointers[:n:n]
		s.pointers = s.pointers[n:]
		for j, of := range it.Offerings {
			p, ok := u.prices[j]
			if !ok {
				out.Offerings[j] = of
				continue
			}
			c := &s.offerings[0]
			s.offerings = s.offerings[1:]
			*c = *of
			c.Price = p.change.apply(of.Price)
			out.Offerings[j] = c
		}
	}
	if len(u.capacity) > 0 {
		capacity := make(map[corev1.ResourceName]resource.Quantity, len(it.Capacity)+len(u.capacity))
		maps.Copy(capacity, it.Capacity)
		maps.Copy(capacity, u.capacity)
		key := resourcesKey(capacity)
		if shared, ok := s.capacity[key]; ok {
			capacity = shared
		} else {
			s.capacity[key] = capacity
		}
		out.Capacity = capacity
	}
	return out
}
