package aws

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// The reference's suite_test.go "Kube Reserved Resources": m5.xlarge by
// default 80m and 893Mi; kubeReserved overrides. The CPU bands round
// each band down (5 vCPUs: 60+10+10+2 = 82m).
func TestKubeReserved(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name        string
		vcpus, pods int64
		set         map[string]awsv1.Quantity
		want        corev1.ResourceList
	}{
		{"m5.xlarge", 4, 58, nil, corev1.ResourceList{corev1.ResourceCPU: q("80m"), corev1.ResourceMemory: q("893Mi"), corev1.ResourceEphemeralStorage: q("1Gi")}},
		{"1 vCPU", 1, 4, nil, corev1.ResourceList{corev1.ResourceCPU: q("60m"), corev1.ResourceMemory: q("299Mi"), corev1.ResourceEphemeralStorage: q("1Gi")}},
		{"5 vCPUs", 5, 29, nil, corev1.ResourceList{corev1.ResourceCPU: q("82m"), corev1.ResourceMemory: q("574Mi"), corev1.ResourceEphemeralStorage: q("1Gi")}},
		{"96 vCPUs", 96, 737, nil, corev1.ResourceList{corev1.ResourceCPU: q("310m"), corev1.ResourceMemory: q("8362Mi"), corev1.ResourceEphemeralStorage: q("1Gi")}},
		{"overridden", 4, 58, map[string]awsv1.Quantity{"cpu": "2", "memory": "10Gi", "ephemeral-storage": "2Gi", "pid": "100"},
			corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("10Gi"), corev1.ResourceEphemeralStorage: q("2Gi")}},
	} {
		if diff := cmp.Diff(tc.want, kubeReserved(tc.vcpus, tc.pods, tc.set), quantityEqual); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// The reference's evictionThreshold and its suite_test.go "Eviction
// Thresholds": 100Mi and 10% of ephemeral storage by default; evictionHard
// as a quantity or a percentage of capacity, 100% as 0; evictionSoft does
// not count.
func TestEvictionThreshold(t *testing.T) {
	memory, storage := resource.MustParse("7577Mi"), resource.MustParse("20Gi")
	for _, tc := range []struct {
		name            string
		hard            map[string]awsv1.EvictionThreshold
		memory, storage int64
	}{
		{"defaults", nil, 100 << 20, 2147483648},
		{"quantities", map[string]awsv1.EvictionThreshold{"memory.available": "500Mi", "nodefs.available": "5Gi"}, 500 << 20, 5 << 30},
		{"percentages", map[string]awsv1.EvictionThreshold{"memory.available": "10%", "nodefs.available": "15%"}, 794506036, 3221225472}, // ceil(7945060352 × 10%), 20Gi × 15%,
		{"100% turns a threshold off", map[string]awsv1.EvictionThreshold{"memory.available": "100%"}, 0, 2147483648},
		{"other signals do not count", map[string]awsv1.EvictionThreshold{"imagefs.available": "50%", "pid.available": "10%"}, 100 << 20, 2147483648},
	} {
		got := evictionThreshold(memory, storage, tc.hard)
		want := corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(tc.memory, resource.BinarySI), corev1.ResourceEphemeralStorage: *resource.NewQuantity(tc.storage, resource.BinarySI)}
		if diff := cmp.Diff(want, got, quantityEqual); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// A class's kubelet settings reach the overhead: system-reserved, a
// percentage nodefs threshold of its 100Gi root volume, and evictionSoft
// left out.
func TestOverhead(t *testing.T) {
	nc := nodeClass(awsv1.AMIFamilyAL2023, mapping("/dev/xvda", "100Gi", true))
	nc.Spec.Kubelet = &awsv1.KubeletConfiguration{
		SystemReserved: map[string]awsv1.Quantity{"cpu": "100m", "memory": "100Mi"},
		EvictionHard:   map[string]awsv1.EvictionThreshold{"nodefs.available": "5%"},
		EvictionSoft:   map[string]awsv1.EvictionThreshold{"memory.available": "1Gi"},
	}
	info := describe("m5.large")
	o := overhead(info, nc, capacity(info, nc, Options{VMMemoryOverheadPercent: 0.075}), 0)
	q := resource.MustParse
	if diff := cmp.Diff(corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("100Mi")}, o.SystemReserved, quantityEqual); diff != "" {
		t.Errorf("system-reserved (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(corev1.ResourceList{corev1.ResourceMemory: q("100Mi"), corev1.ResourceEphemeralStorage: q("5Gi")}, o.EvictionThreshold, quantityEqual); diff != "" {
		t.Errorf("eviction (-want +got):\n%s", diff)
	}
}
