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

// copies builds the adjusted instance types, sharing what it can: an
// instance type no overlay changes is the cloud's own value; a changed one
// copies only the struct, its offerings slice and the offerings whose
// price changed (the rest, its requirements and overhead are shared), and
// its capacity only when an overlay adds resources; NodePools with the
// same instance types and the same updates (an overlay that does not
// select by NodePool) share one adjusted instance type and one slice. The
// reference's users report 20–30% more controller memory with broad
// overlays; this keeps Capstan's under 10% (docs/overlay.md, "Memory").
type copies struct {
	types  map[typeKey]*cloudprovider.InstanceType
	slices map[sliceKey][]*cloudprovider.InstanceType
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

func newCopies() *copies {
	return &copies{types: map[typeKey]*cloudprovider.InstanceType{}, slices: map[sliceKey][]*cloudprovider.InstanceType{}}
}

// of is p's instance types with its updates applied.
func (c *copies) of(p *pool) []*cloudprovider.InstanceType {
	if len(p.updates) == 0 {
		return p.its
	}
	keys := make([]string, len(p.its))
	var all strings.Builder
	for _, i := range slices.Sorted(maps.Keys(p.updates)) {
		keys[i] = p.updates[i].key()
		fmt.Fprintf(&all, "%d{%s}", i, keys[i])
	}
	sk := sliceKey{first: &p.its[0], n: len(p.its), updates: all.String()}
	if out, ok := c.slices[sk]; ok {
		return out
	}
	out := make([]*cloudprovider.InstanceType, len(p.its))
	for i, it := range p.its {
		u := p.updates[i]
		if u == nil {
			out[i] = it
			continue
		}
		tk := typeKey{it: it, updates: keys[i]}
		adjusted, ok := c.types[tk]
		if !ok {
			adjusted = u.apply(it)
			c.types[tk] = adjusted
		}
		out[i] = adjusted
	}
	c.slices[sk] = out
	return out
}

// key identifies the update's effect: two equal keys adjust an instance
// type alike.
func (u *typeUpdate) key() string {
	var b strings.Builder
	for _, j := range slices.Sorted(maps.Keys(u.prices)) {
		fmt.Fprintf(&b, "%d:%+v;", j, u.prices[j].change)
	}
	for _, name := range slices.Sorted(maps.Keys(u.capacity)) {
		q := u.capacity[name]
		fmt.Fprintf(&b, "%s=%s;", name, q.String())
	}
	return b.String()
}

// apply returns it with the update, copy-on-write.
func (u *typeUpdate) apply(it *cloudprovider.InstanceType) *cloudprovider.InstanceType {
	out := *it
	if len(u.prices) > 0 {
		out.Offerings = make(cloudprovider.Offerings, len(it.Offerings))
		for j, of := range it.Offerings {
			p, ok := u.prices[j]
			if !ok {
				out.Offerings[j] = of
				continue
			}
			adjusted := *of
			adjusted.Price = p.change.apply(of.Price)
			out.Offerings[j] = &adjusted
		}
	}
	if len(u.capacity) > 0 {
		out.Capacity = make(map[corev1.ResourceName]resource.Quantity, len(it.Capacity)+len(u.capacity))
		maps.Copy(out.Capacity, it.Capacity)
		maps.Copy(out.Capacity, u.capacity)
	}
	return &out
}
