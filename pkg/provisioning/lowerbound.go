package provisioning

import (
	"math"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// LowerBound is the hourly price no packing of the pods can beat: the
// cheapest fractional mix of instance types whose allocatable CPU and
// memory (capacity less each node's overhead) cover the pods' total
// requests. It is a linear program with two constraints, so an optimal mix
// uses at most two instance types; trying every type and every pair finds
// it exactly. Each type is priced at its cheapest available offering.
func LowerBound(pods []*corev1.Pod, its []*cloudprovider.InstanceType) float64 {
	var total scheduling.Resources
	for _, p := range pods {
		total = total.Add(scheduling.PodRequests(p))
	}
	type option struct{ cpu, mem, price float64 }
	var opts []option
	for _, it := range its {
		o := it.Offerings.Available().Cheapest()
		if o == nil {
			continue
		}
		a := scheduling.NewResources(it.Allocatable())
		if a.CPU <= 0 && a.Memory <= 0 {
			continue
		}
		opts = append(opts, option{float64(a.CPU), float64(a.Memory), o.Price})
	}
	c, m := float64(total.CPU), float64(total.Memory)
	if c <= 0 && m <= 0 {
		return 0
	}
	best := math.Inf(1)
	for i, a := range opts {
		// One type alone: enough nodes for the scarcer resource.
		n := 0.0
		if c > 0 {
			n = math.Max(n, safeDiv(c, a.cpu))
		}
		if m > 0 {
			n = math.Max(n, safeDiv(m, a.mem))
		}
		best = math.Min(best, n*a.price)
		// Two types with both constraints tight.
		for _, b := range opts[i+1:] {
			det := a.cpu*b.mem - b.cpu*a.mem
			if det == 0 {
				continue
			}
			x := (c*b.mem - b.cpu*m) / det
			y := (a.cpu*m - c*a.mem) / det
			if x >= 0 && y >= 0 {
				best = math.Min(best, x*a.price+y*b.price)
			}
		}
	}
	return best
}

func safeDiv(a, b float64) float64 {
	if b <= 0 {
		return math.Inf(1)
	}
	return a / b
}
