package provisioning

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// poolTypes is a NodePool's instance types with the overhead of the
// daemonsets that would run on each: its are those the daemonsets fit on,
// cheapest available offering first; crowded are those they do not fit on
// (never launched, kept to say why a pod that needs one waits).
type poolTypes struct {
	its, crowded []*itData
}

// typesMemo shares poolTypes between the NodePools of one solve or
// Prepare: NodePools with the same instance types (one slice per
// NodeClass, cloudprovider.InstanceTypesByNodePool) on which the same
// daemonset variants may run get one poolTypes, so a NodePool costs its
// own requirements and limits, not a copy of every instance type, and the
// daemonset overhead is worked out once per solve or Prepare for each
// such group, not per NodePool; it is built again for the next solve,
// whose daemonsets and instance types may differ (docs/simulate.md,
// "Scale"). Its values are read-only once built.
type typesMemo struct {
	daemons   []*podData
	wellKnown sets.Set[string]
	built     map[string]*poolTypes
}

func newTypesMemo(daemons []*podData) *typesMemo {
	return &typesMemo{daemons: daemons, wellKnown: scheduling.WellKnownLabels(), built: map[string]*poolTypes{}}
}

// daemonVariant is one variant of a daemonset pod that a NodePool's
// requirements allow.
type daemonVariant struct {
	d *podData
	v *variant
}

// of is the poolTypes of p's NodePool over its.
func (m *typesMemo) of(p *poolData, its []*cloudprovider.InstanceType) *poolTypes {
	// A daemonset with a variant that selects nothing runs on every type
	// with an offering: its requests are summed once (everywhere), and
	// only the daemonsets that select types or zones (selective) are
	// matched per type.
	var everywhere scheduling.Resources
	var everywherePorts []scheduling.HostPort
	var selective []daemonVariant
	var key strings.Builder
	if len(its) > 0 {
		fmt.Fprintf(&key, "%p/%d", &its[0], len(its))
	}
	for i, d := range m.daemons {
		if !p.runsDaemon(d, m.wellKnown) {
			continue
		}
		var allowed []daemonVariant
		anywhere := false
		for j := range d.variants {
			if p.reqs.Compatible(d.variants[j].reqs, m.wellKnown) == nil {
				allowed = append(allowed, daemonVariant{d, &d.variants[j]})
				anywhere = anywhere || len(d.variants[j].reqs) == 0
				fmt.Fprintf(&key, ",%d.%d", i, j)
			}
		}
		if anywhere {
			everywhere = everywhere.Add(d.requests)
			everywherePorts = append(everywherePorts, d.hostPorts...)
			continue
		}
		selective = append(selective, allowed...)
	}
	if t, ok := m.built[key.String()]; ok {
		return t
	}
	t := &poolTypes{}
	for _, it := range its {
		d := &itData{it: it, alloc: scheduling.NewResources(it.Allocatable()), capacity: scheduling.NewResources(it.Capacity), price: cheapestAvailable(it)}
		if len(it.Offerings) > 0 {
			d.daemon = everywhere
			d.daemonPorts = slices.Clone(everywherePorts)
		}
		var last *podData
		for _, r := range selective {
			// A daemonset counts once however many of its variants allow
			// the type; its variants are consecutive in selective.
			if r.d == last || !runsOn(r.v, it) {
				continue
			}
			last = r.d
			d.daemon = d.daemon.Add(r.d.requests)
			d.daemonPorts = append(d.daemonPorts, r.d.hostPorts...)
		}
		// A type its daemonsets don't fit on is never launched, as in the
		// reference: they must run on every node.
		if !d.daemon.Fits(d.alloc) {
			t.crowded = append(t.crowded, d)
			continue
		}
		d.alloc = d.alloc.Sub(d.daemon)
		t.its = append(t.its, d)
	}
	slices.SortStableFunc(t.its, func(a, b *itData) int {
		return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.it.Name, b.it.Name))
	})
	for i, d := range t.its {
		d.id = uint64(i)
	}
	m.built[key.String()] = t
	return t
}

// runsOn is runsDaemon's per-instance-type part, for a variant the
// NodePool allows: a daemonset that selects instance types (by node
// affinity on their labels) or zones runs only on the types it selects
// with an offering in a zone it allows, so only they carry its overhead
// and host ports.
func runsOn(v *variant, it *cloudprovider.InstanceType) bool {
	if it.Requirements.Intersects(v.reqs) != nil {
		return false
	}
	for _, o := range it.Offerings {
		if o.CompatibleWith(v.reqs) {
			return true
		}
	}
	return false
}

// crowdedOut describes, for a pod no instance type matches, the types
// that would match but whose daemonsets leave no room ("" if none): the
// pod waits for room after the daemonsets, not for other requirements.
func (p *poolData) crowdedOut(reqs scheduling.Requirements) string {
	offerings := cloudprovider.NewOfferingFilter(reqs)
	n, example := 0, (*itData)(nil)
	for _, it := range p.crowded {
		if it.it.Requirements.Intersects(reqs) != nil || !hasOffering(it.it, offerings, "", nil) {
			continue
		}
		if n++; example == nil {
			example = it
		}
	}
	if n == 0 {
		return ""
	}
	short := example.daemon.Exceeded(example.alloc)
	parts := make([]string, len(short))
	for i, name := range short {
		parts[i] = fmt.Sprintf("%s %s of %s", name, scheduling.FormatAmount(name, example.daemon.Get(name)), scheduling.FormatAmount(name, example.alloc.Get(name)))
	}
	return fmt.Sprintf("the daemonsets that would run on the %d instance types the pod's requirements allow leave no room for it (on %s they request %s)",
		n, example.it.Name, strings.Join(parts, ", "))
}
