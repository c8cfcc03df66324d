package aws

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// The VPC CNI's limits on the default network card: the reference's
// zz_generated.vpclimits.go (v1.14.1) gives default-card ENIs × (IPv4
// per ENI − 1) + 2; t3.large with reserved ENIs from its suite_test.go
// ("should reserve ENIs when aws.reservedENIs is set"); EFA-only
// interfaces from its "Network Interfaces" cases (m6idn.32xlarge, 8 ENIs
// on card 0 with 50 addresses each like c6in.32xlarge: 394 with the
// EFA-only interface on card 1, (8−1) × 49 + 2 = 345 on card 0).
func TestENILimitedPods(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reserved int
		nics     []awsv1.NetworkInterface
		want     int64
	}{
		{"p5.48xlarge", 0, nil, 100},
		{"p4d.24xlarge", 0, nil, 737},
		{"trn1.32xlarge", 0, nil, 247},
		{"c6in.32xlarge", 0, nil, 394},
		{"dl1.24xlarge", 0, nil, 737},
		{"m5.large", 0, nil, 29},
		{"m5.xlarge", 0, nil, 58},
		{"t3.large", 0, nil, 35},
		{"t3.large", 1, nil, 24},
		{"t3.large", 1_000_000, nil, 0},
		{"c6in.32xlarge", 0, efaOnlyOnCard(1), 394},
		{"c6in.32xlarge", 0, efaOnlyOnCard(0), 345},
		{"c6in.32xlarge", 1, efaOnlyOnCard(0), 296},
		{"t3.large", 2, efaOnlyOnCard(0), 0},
	} {
		if got := eniLimitedPods(describe(tc.name), tc.reserved, tc.nics); got != tc.want {
			t.Errorf("%s with %d reserved ENIs and interfaces %v: %d pods, want %d", tc.name, tc.reserved, tc.nics, got, tc.want)
		}
	}
}

// Pods and the pod count kube-reserved memory is sized for, per AMI
// family, from the reference's suite_test.go (t3.large, one reserved ENI:
// AL2/AL2023/Custom 24 pods and 640Mi, Bottlerocket 24 and 519Mi,
// Windows 110 and 1465Mi) and its FeatureFlags (podsPerCore not on
// Bottlerocket; maxPods does not move AL2's kube-reserved).
func TestMaxPods(t *testing.T) {
	for _, tc := range []struct {
		name, family    string
		kubelet         *awsv1.KubeletConfiguration
		reserved        int
		nics            []awsv1.NetworkInterface
		pods, kubeMemMi int64
	}{
		{"t3.large", awsv1.AMIFamilyAL2, nil, 1, nil, 24, 640},
		{"t3.large", awsv1.AMIFamilyAL2023, nil, 1, nil, 24, 640},
		{"t3.large", awsv1.AMIFamilyCustom, nil, 1, nil, 24, 640},
		{"t3.large", awsv1.AMIFamilyBottlerocket, nil, 1, nil, 24, 519},
		{"t3.large", awsv1.AMIFamilyWindows2019, nil, 1, nil, 110, 1465},
		{"t3.large", awsv1.AMIFamilyWindows2022, nil, 1, nil, 110, 1465},
		{"t3.large", awsv1.AMIFamilyWindows2025, nil, 1, nil, 110, 1465},
		{"p5.48xlarge", awsv1.AMIFamilyAL2023, nil, 0, nil, 100, 11*100 + 255},
		{"p4d.24xlarge", awsv1.AMIFamilyAL2023, &awsv1.KubeletConfiguration{MaxPods: ptr.To[int32](110)}, 0, nil, 110, 11*737 + 255},
		{"p4d.24xlarge", awsv1.AMIFamilyBottlerocket, &awsv1.KubeletConfiguration{MaxPods: ptr.To[int32](110)}, 0, nil, 110, 11*110 + 255},
		{"m5.large", awsv1.AMIFamilyAL2023, &awsv1.KubeletConfiguration{PodsPerCore: ptr.To[int32](4)}, 0, nil, 8, 11*29 + 255},
		{"m5.large", awsv1.AMIFamilyBottlerocket, &awsv1.KubeletConfiguration{PodsPerCore: ptr.To[int32](4)}, 0, nil, 29, 11*29 + 255},
		{"m5.large", awsv1.AMIFamilyWindows2022, &awsv1.KubeletConfiguration{PodsPerCore: ptr.To[int32](4)}, 0, nil, 8, 11*8 + 255},
		{"m5.large", awsv1.AMIFamilyAL2023, &awsv1.KubeletConfiguration{PodsPerCore: ptr.To[int32](0)}, 0, nil, 29, 11*29 + 255},
		// An EFA-only interface on card 0 lowers the ENI limit kube-reserved
		// memory is sized for too (types.go NewInstanceType passes the
		// class's interfaces to ENILimitedPods).
		{"c6in.32xlarge", awsv1.AMIFamilyAL2023, nil, 0, efaOnlyOnCard(0), 345, 11*345 + 255},
		{"c6in.32xlarge", awsv1.AMIFamilyAL2023, &awsv1.KubeletConfiguration{MaxPods: ptr.To[int32](110)}, 0, efaOnlyOnCard(0), 110, 11*345 + 255},
		{"c6in.32xlarge", awsv1.AMIFamilyBottlerocket, nil, 0, efaOnlyOnCard(0), 345, 11*345 + 255},
	} {
		info := describe(tc.name)
		if got := maxPods(info, tc.family, tc.kubelet, tc.reserved, tc.nics); got != tc.pods {
			t.Errorf("%s on %s: %d pods, want %d", tc.name, tc.family, got, tc.pods)
		}
		if got := 11*reservedPods(info, tc.family, tc.kubelet, tc.reserved, tc.nics) + 255; got != tc.kubeMemMi {
			t.Errorf("%s on %s: kube-reserved memory %dMi, want %dMi", tc.name, tc.family, got, tc.kubeMemMi)
		}
	}
}

// SizeInMiB less 64 MiB on Graviton, less ceil(7.5%): the reference's
// instancetype/types.go memory.
func TestMemoryMiB(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int64
	}{
		{"m5.large", 8192 - 615},          // 614.4 rounded up
		{"c6g.large", 4096 - 64 - 303},    // 4032 × 0.075 = 302.4
		{"m5.metal", 393216 - 29492},      // 29491.2
		{"p5.48xlarge", 2097152 - 157287}, // 157286.4
	} {
		if got := memoryMiB(describe(tc.name), 0.075); got != tc.want {
			t.Errorf("%s: %d MiB, want %d", tc.name, got, tc.want)
		}
	}
}

func TestEphemeralStorage(t *testing.T) {
	raid0 := func(nc *awsv1.EC2NodeClass) *awsv1.EC2NodeClass {
		nc.Spec.InstanceStorePolicy = ptr.To(awsv1.InstanceStorePolicyRAID0)
		return nc
	}
	for _, tc := range []struct {
		name, instance string
		nc             *awsv1.EC2NodeClass
		want           string
	}{
		{"the root volume", "m5.large", nodeClass(awsv1.AMIFamilyAL2023, mapping("/dev/xvda", "100Gi", true)), "100Gi"},
		{"the family default", "m5.large", nodeClass(awsv1.AMIFamilyAL2023), "20Gi"},
		{"RAID0: the instance store, in decimal GB", "g4dn.8xlarge", raid0(nodeClass(awsv1.AMIFamilyAL2023)), "900G"},
		{"RAID0 without an instance store: the root volume", "m5.large", raid0(nodeClass(awsv1.AMIFamilyAL2023, mapping("/dev/xvda", "100Gi", true))), "100Gi"},
	} {
		got := ephemeralStorage(describe(tc.instance), tc.nc)
		if want := resource.MustParse(tc.want); got.Cmp(want) != 0 {
			t.Errorf("%s: %s, want %s", tc.name, got.String(), tc.want)
		}
	}
}

// Devices by manufacturer and kind, as the reference's nvidiaGPUs,
// amdGPUs, habanaGaudis, awsNeuronDevices, awsNeuronCores and efas count
// them, on the types its fake DescribeInstanceTypes data describes; with
// networkInterfaces set, the class's EFA-only interfaces instead of
// MaximumEfaInterfaces (efas).
func TestDevices(t *testing.T) {
	n := func(v int64) resource.Quantity { return *resource.NewQuantity(v, resource.DecimalSI) }
	primary := awsv1.NetworkInterface{InterfaceType: awsv1.InterfaceTypeInterface}
	for _, tc := range []struct {
		name string
		nics []awsv1.NetworkInterface
		want corev1.ResourceList
	}{
		{"m5.large", nil, corev1.ResourceList{}},
		{"g4dn.8xlarge", nil, corev1.ResourceList{ResourceNVIDIAGPU: n(1), ResourceEFA: n(1)}},
		{"g4ad.16xlarge", nil, corev1.ResourceList{ResourceAMDGPU: n(4)}},
		{"dl1.24xlarge", nil, corev1.ResourceList{ResourceHabanaGaudi: n(8), ResourceEFA: n(4)}},
		{"inf2.xlarge", nil, corev1.ResourceList{ResourceAWSNeuron: n(1), ResourceAWSNeuronCore: n(2)}},
		{"trn1.32xlarge", nil, corev1.ResourceList{ResourceAWSNeuron: n(16), ResourceAWSNeuronCore: n(32), ResourceEFA: n(8)}},
		{"p5.48xlarge", nil, corev1.ResourceList{ResourceNVIDIAGPU: n(8), ResourceEFA: n(32)}},
		{"p5.48xlarge", append(efaOnlyOnCard(0), awsv1.NetworkInterface{NetworkCardIndex: 1, InterfaceType: awsv1.InterfaceTypeEFAOnly}), corev1.ResourceList{ResourceNVIDIAGPU: n(8), ResourceEFA: n(2)}},
		{"p4d.24xlarge", []awsv1.NetworkInterface{primary}, corev1.ResourceList{ResourceNVIDIAGPU: n(8)}},
		{"m5.large", efaOnlyOnCard(0), corev1.ResourceList{ResourceEFA: n(1)}},
	} {
		if diff := cmp.Diff(tc.want, devices(describe(tc.name), tc.nics)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// The whole capacity of two types, default AL2023 class (p4d memory:
// 1179648 − ceil(88473.6)).
func TestCapacity(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name string
		want corev1.ResourceList
	}{
		{"m5.large", corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("7577Mi"), corev1.ResourceEphemeralStorage: q("20Gi"), corev1.ResourcePods: q("29")}},
		{"p4d.24xlarge", corev1.ResourceList{corev1.ResourceCPU: q("96"), corev1.ResourceMemory: q("1091174Mi"), corev1.ResourceEphemeralStorage: q("20Gi"),
			corev1.ResourcePods: q("737"), ResourceNVIDIAGPU: q("8"), ResourceEFA: q("4")}},
	} {
		got := capacity(describe(tc.name), nodeClass(awsv1.AMIFamilyAL2023), Options{VMMemoryOverheadPercent: 0.075})
		if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// efaOnlyOnCard is the primary interface and one EFA-only interface on
// network card card.
func efaOnlyOnCard(card int32) []awsv1.NetworkInterface {
	return []awsv1.NetworkInterface{
		{InterfaceType: awsv1.InterfaceTypeInterface},
		{NetworkCardIndex: card, DeviceIndex: 1, InterfaceType: awsv1.InterfaceTypeEFAOnly},
	}
}

// A class's networkInterfaces shape the whole instance type: pods and
// kube-reserved memory lose the EFA-only interface on card 0, and the EFA
// devices are the class's (the reference's "Network Interfaces" cases:
// (8−1) × 49 + 2 = 345 pods, 11 × 345 + 255 MiB).
func TestInstanceTypeNetworkInterfaces(t *testing.T) {
	nc := nodeClass(awsv1.AMIFamilyAL2023)
	nc.Spec.NetworkInterfaces = efaOnlyOnCard(0)
	it := instanceType(describe("c6in.32xlarge"), nc, Options{VMMemoryOverheadPercent: 0.075}, bandwidths(t))
	for name, want := range map[corev1.ResourceName]resource.Quantity{
		corev1.ResourcePods: resource.MustParse("345"),
		ResourceEFA:         resource.MustParse("1"),
	} {
		if got := it.Capacity[name]; got.Cmp(want) != 0 {
			t.Errorf("capacity %s: %s, want %s", name, got.String(), want.String())
		}
	}
	if got, want := it.Overhead.KubeReserved[corev1.ResourceMemory], resource.MustParse("4050Mi"); got.Cmp(want) != 0 {
		t.Errorf("kube-reserved memory: %s, want %s", got.String(), want.String())
	}
}
