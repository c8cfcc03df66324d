package scheduling

import (
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Resources is a compact resource vector for the solver's hot path:
// corev1.ResourceList is a map of Quantities, too slow to add and compare
// millions of times. CPU is in millicores, memory and storage in bytes;
// extended resources (nvidia.com/gpu …) are integer counts in a small
// sorted slice, nil for most pods.
type Resources struct {
	CPU, Memory, Storage, Pods int64
	Extended                   []Extended
}

// Extended is one extended resource amount.
type Extended struct {
	Name  corev1.ResourceName
	Value int64
}

// NewResources converts a ResourceList. Unknown non-extended resources
// (hugepages …) are kept as extended entries so they still must fit.
func NewResources(rl corev1.ResourceList) Resources {
	var r Resources
	for name, q := range rl {
		switch name {
		case corev1.ResourceCPU:
			r.CPU = MilliValue(q)
		case corev1.ResourceMemory:
			r.Memory = Value(q)
		case corev1.ResourceEphemeralStorage:
			r.Storage = Value(q)
		case corev1.ResourcePods:
			r.Pods = Value(q)
		default:
			if q.IsZero() {
				continue
			}
			r.Extended = append(r.Extended, Extended{Name: name, Value: Value(q)})
		}
	}
	slices.SortFunc(r.Extended, func(a, b Extended) int { return compareNames(a.Name, b.Name) })
	return r
}

// The largest quantities an int64 holds in each unit.
var (
	maxMilli = resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)
	minMilli = resource.NewMilliQuantity(math.MinInt64, resource.DecimalSI)
	maxValue = resource.NewQuantity(math.MaxInt64, resource.DecimalSI)
	minValue = resource.NewQuantity(math.MinInt64, resource.DecimalSI)
)

// MilliValue is q in thousandths, saturated to the int64 range:
// Quantity.MilliValue wraps around (9.3e15 cores comes back negative), and
// a request that large must never fit a node nor a limit that large block
// one.
func MilliValue(q resource.Quantity) int64 {
	switch {
	case q.Cmp(*maxMilli) > 0:
		return math.MaxInt64
	case q.Cmp(*minMilli) < 0:
		return math.MinInt64
	}
	return q.MilliValue()
}

// Value is q rounded up to an integer, saturated to the int64 range.
func Value(q resource.Quantity) int64 {
	switch {
	case q.Cmp(*maxValue) > 0:
		return math.MaxInt64
	case q.Cmp(*minValue) < 0:
		return math.MinInt64
	}
	return q.Value()
}

// FormatAmount renders an amount of one resource in its integer unit
// (millicores for cpu) as a quantity, for messages.
func FormatAmount(name corev1.ResourceName, v int64) string {
	switch name {
	case corev1.ResourceCPU:
		return resource.NewMilliQuantity(v, resource.DecimalSI).String()
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return resource.NewQuantity(v, resource.BinarySI).String()
	}
	return resource.NewQuantity(v, resource.DecimalSI).String()
}

// add and sub saturate instead of wrapping around, so sums of huge
// requests stay huge.
func add(a, b int64) int64 {
	c := a + b
	switch {
	case a > 0 && b > 0 && c < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && c >= 0:
		return math.MinInt64
	}
	return c
}

func sub(a, b int64) int64 {
	if b == math.MinInt64 {
		if a >= 0 {
			return math.MaxInt64
		}
		return a - b
	}
	return add(a, -b)
}

func compareNames(a, b corev1.ResourceName) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// PodRequests is what a pod needs from a node, as kube-scheduler counts
// it: the larger of the init containers' peak and the containers' sum
// (restartable sidecar init containers counted for the pod's lifetime),
// plus pod overhead, plus one pod slot.
func PodRequests(pod *corev1.Pod) Resources {
	r := NewResources(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
	r.Pods = 1
	return r
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	out := Resources{CPU: add(r.CPU, o.CPU), Memory: add(r.Memory, o.Memory), Storage: add(r.Storage, o.Storage), Pods: add(r.Pods, o.Pods)}
	out.Extended = mergeExtended(r.Extended, o.Extended, 1)
	return out
}

// Sub returns r − o; amounts may go negative.
func (r Resources) Sub(o Resources) Resources {
	out := Resources{CPU: sub(r.CPU, o.CPU), Memory: sub(r.Memory, o.Memory), Storage: sub(r.Storage, o.Storage), Pods: sub(r.Pods, o.Pods)}
	out.Extended = mergeExtended(r.Extended, o.Extended, -1)
	return out
}

// merge is a + b for sign 1, a − b for sign −1, saturating.
func merge(a, b, sign int64) int64 {
	if sign < 0 {
		return sub(a, b)
	}
	return add(a, b)
}

func mergeExtended(a, b []Extended, sign int64) []Extended {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 && sign == 1 {
		return b
	}
	out := make([]Extended, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Name < b[j].Name):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].Name < a[i].Name:
			out = append(out, Extended{Name: b[j].Name, Value: merge(0, b[j].Value, sign)})
			j++
		default:
			out = append(out, Extended{Name: a[i].Name, Value: merge(a[i].Value, b[j].Value, sign)})
			i++
			j++
		}
	}
	return out
}

// Fits reports whether r fits within capacity: every amount, extended
// resources included, is at most capacity's. It does not allocate.
func (r Resources) Fits(capacity Resources) bool {
	if r.CPU > capacity.CPU || r.Memory > capacity.Memory || r.Pods > capacity.Pods || r.Storage > capacity.Storage {
		return false
	}
	j := 0
	for _, e := range r.Extended {
		if e.Value <= 0 {
			continue
		}
		for j < len(capacity.Extended) && capacity.Extended[j].Name < e.Name {
			j++
		}
		if j == len(capacity.Extended) || capacity.Extended[j].Name != e.Name || capacity.Extended[j].Value < e.Value {
			return false
		}
	}
	return true
}

// Max returns the componentwise maximum of r and o.
func (r Resources) Max(o Resources) Resources {
	out := Resources{CPU: max(r.CPU, o.CPU), Memory: max(r.Memory, o.Memory), Storage: max(r.Storage, o.Storage), Pods: max(r.Pods, o.Pods)}
	out.Extended = slices.Clone(r.Extended)
	for _, e := range o.Extended {
		i, found := slices.BinarySearchFunc(out.Extended, e.Name, func(x Extended, n corev1.ResourceName) int { return compareNames(x.Name, n) })
		if !found {
			out.Extended = slices.Insert(out.Extended, i, e)
		} else if e.Value > out.Extended[i].Value {
			out.Extended[i].Value = e.Value
		}
	}
	return out
}

// Exceeded names the resources of r above capacity, for reasons: exactly
// those that make Fits false, so zero or negative extended amounts in r are
// never named.
func (r Resources) Exceeded(capacity Resources) []corev1.ResourceName {
	var names []corev1.ResourceName
	if r.CPU > capacity.CPU {
		names = append(names, corev1.ResourceCPU)
	}
	if r.Memory > capacity.Memory {
		names = append(names, corev1.ResourceMemory)
	}
	if r.Storage > capacity.Storage {
		names = append(names, corev1.ResourceEphemeralStorage)
	}
	if r.Pods > capacity.Pods {
		names = append(names, corev1.ResourcePods)
	}
	for _, e := range r.Extended {
		if e.Value > 0 && e.Value > capacity.Get(e.Name) {
			names = append(names, e.Name)
		}
	}
	return names
}

// Get is the amount of one resource in its integer unit.
func (r Resources) Get(name corev1.ResourceName) int64 {
	switch name {
	case corev1.ResourceCPU:
		return r.CPU
	case corev1.ResourceMemory:
		return r.Memory
	case corev1.ResourceEphemeralStorage:
		return r.Storage
	case corev1.ResourcePods:
		return r.Pods
	}
	for _, e := range r.Extended {
		if e.Name == name {
			return e.Value
		}
	}
	return 0
}

// ResourceList converts back, leaving out zero amounts.
func (r Resources) ResourceList() corev1.ResourceList {
	rl := corev1.ResourceList{}
	set := func(name corev1.ResourceName, q *resource.Quantity) {
		if !q.IsZero() {
			rl[name] = *q
		}
	}
	set(corev1.ResourceCPU, resource.NewMilliQuantity(r.CPU, resource.DecimalSI))
	set(corev1.ResourceMemory, resource.NewQuantity(r.Memory, resource.BinarySI))
	set(corev1.ResourceEphemeralStorage, resource.NewQuantity(r.Storage, resource.BinarySI))
	set(corev1.ResourcePods, resource.NewQuantity(r.Pods, resource.DecimalSI))
	for _, e := range r.Extended {
		set(e.Name, resource.NewQuantity(e.Value, resource.DecimalSI))
	}
	return rl
}
