package aws

import (
	"math"
	"strconv"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Eviction signals that count in a node's allocatable.
const (
	signalMemoryAvailable = "memory.available"
	signalNodeFSAvailable = "nodefs.available"
)

// overhead is what a node of the type launched from nc holds back from
// pods, given its capacity (instancetype/types.go NewInstanceType).
func overhead(info ec2types.InstanceTypeInfo, nc *awsv1.EC2NodeClass, capacity corev1.ResourceList, reservedENIs int) cloudprovider.Overhead {
	k := nc.Spec.Kubelet
	if k == nil {
		k = &awsv1.KubeletConfiguration{}
	}
	return cloudprovider.Overhead{
		KubeReserved:      kubeReserved(int64(vcpus(info)), reservedPods(info, nc.AMIFamily(), nc.Spec.Kubelet, reservedENIs, nc.Spec.NetworkInterfaces), k.KubeReserved),
		SystemReserved:    quantities(k.SystemReserved),
		EvictionThreshold: evictionThreshold(capacity[corev1.ResourceMemory], capacity[corev1.ResourceEphemeralStorage], k.EvictionHard),
	}
}

// kubeReserved is the kubelet's and runtime's share (instancetype/types.go
// kubeReservedResources): 11 MiB per pod plus 255 MiB of memory, 1Gi of
// ephemeral storage, and CPU at 6% of the first core, 1% of the second,
// 0.5% of the next two and 0.25% of the rest, each band's millicores
// rounded down; the EC2NodeClass's kubeReserved overrides each.
func kubeReserved(vcpus, pods int64, set map[string]awsv1.Quantity) corev1.ResourceList {
	milli, cpu := vcpus*1000, int64(0)
	for _, band := range []struct {
		start, end int64
		share      float64
	}{{0, 1000, 0.06}, {1000, 2000, 0.01}, {2000, 4000, 0.005}, {4000, 1 << 31, 0.0025}} {
		if milli < band.start {
			break
		}
		cpu += int64(float64(min(milli, band.end)-band.start) * band.share)
	}
	rl := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity((11*pods+255)<<20, resource.BinarySI),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
	}
	for name, q := range quantities(set) {
		rl[name] = q
	}
	return rl
}

// quantities are the kubelet's reservations as resources; pid, which no
// instance type has a capacity of, is left out, as are values that do
// not parse (the API's CEL refuses them).
func quantities(values map[string]awsv1.Quantity) corev1.ResourceList {
	if len(values) == 0 {
		return nil
	}
	rl := corev1.ResourceList{}
	for name, v := range values {
		if q, err := resource.ParseQuantity(string(v)); err == nil && name != "pid" {
			rl[corev1.ResourceName(name)] = q
		}
	}
	return rl
}

// evictionThreshold is what the kubelet keeps free before it evicts
// (instancetype/types.go evictionThreshold): 100Mi of memory and 10% of
// ephemeral storage (rounded up), unless evictionHard sets the signal,
// as a quantity or a percentage of the capacity. evictionSoft is left
// out, as the reference leaves it: it only warns.
func evictionThreshold(memory, storage resource.Quantity, hard map[string]awsv1.EvictionThreshold) corev1.ResourceList {
	rl := corev1.ResourceList{
		corev1.ResourceMemory:           resource.MustParse("100Mi"),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(int64(math.Ceil(float64(storage.Value())/100*10)), resource.DecimalSI),
	}
	for signal, name := range map[string]corev1.ResourceName{signalMemoryAvailable: corev1.ResourceMemory, signalNodeFSAvailable: corev1.ResourceEphemeralStorage} {
		v, ok := hard[signal]
		if !ok {
			continue
		}
		capacity := memory
		if name == corev1.ResourceEphemeralStorage {
			capacity = storage
		}
		if q, ok := evictionSignal(capacity, string(v)); ok {
			rl[name] = q
		}
	}
	return rl
}

// evictionSignal is a threshold's quantity: a percentage of capacity
// rounded up (100% turns the threshold off, as for the kubelet), or the
// quantity itself.
func evictionSignal(capacity resource.Quantity, v string) (resource.Quantity, bool) {
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		p, err := strconv.ParseFloat(pct, 64)
		if err != nil {
			return resource.Quantity{}, false
		}
		if p == 100 {
			p = 0
		}
		return *resource.NewQuantity(int64(math.Ceil(capacity.AsApproximateFloat64()/100*p)), resource.DecimalSI), true
	}
	q, err := resource.ParseQuantity(v)
	return q, err == nil
}
