package catalog

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

func TestCloudInstanceType(t *testing.T) {
	cases := []struct {
		name                                        string
		t                                           InstanceType
		cpu, memory, pods, reservedCPU, reservedMem string
		gpus                                        string
	}{
		{"2 vCPU, 29 pods", InstanceType{Name: "m5.large", Family: "m5", Category: "m", Generation: 5, Size: "large", Architecture: ArchAMD64, VCPU: 2, MemoryMiB: 8192, MaxPods: 29},
			"2", "8Gi", "29", "70m", "574Mi", ""},
		{"8 vCPU with GPUs", InstanceType{Name: "g5.2xlarge", Family: "g5", Category: "g", Generation: 5, Size: "2xlarge", Architecture: ArchAMD64, VCPU: 8, MemoryMiB: 32768, MaxPods: 58,
			GPUName: "a10g", GPUManufacturer: "nvidia", GPUCount: 1, GPUMemoryMiB: 24576},
			"8", "32Gi", "58", "90m", "893Mi", "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			it := tc.t.CloudInstanceType("us-west-2")
			for name, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: tc.cpu, corev1.ResourceMemory: tc.memory, corev1.ResourcePods: tc.pods} {
				if got := it.Capacity[name]; got.String() != want {
					t.Errorf("capacity %s %s, want %s", name, got.String(), want)
				}
			}
			if got := it.Overhead.KubeReserved[corev1.ResourceCPU]; got.String() != tc.reservedCPU {
				t.Errorf("kube-reserved cpu %s, want %s", got.String(), tc.reservedCPU)
			}
			if got := it.Overhead.KubeReserved[corev1.ResourceMemory]; got.String() != tc.reservedMem {
				t.Errorf("kube-reserved memory %s, want %s", got.String(), tc.reservedMem)
			}
			if got, ok := it.Capacity["nvidia.com/gpu"]; (tc.gpus != "") != ok || (ok && got.String() != tc.gpus) {
				t.Errorf("gpus %s (%t), want %q", got.String(), ok, tc.gpus)
			}
			for key, want := range map[string]string{v1.LabelInstanceType: tc.t.Name, v1.LabelRegion: "us-west-2", v1.LabelArch: ArchAMD64} {
				if r := it.Requirements.Get(key); !r.Has(want) || r.Len() != 1 {
					t.Errorf("requirement %s is %s, want %s", key, r, want)
				}
			}
		})
	}
}

// A type without a value for a type-level label (a CPU type's GPU name,
// the hypervisor the catalog does not record) does not satisfy a
// requirement that the label be one value: it is required absent.
func TestCloudInstanceTypeWithoutALabel(t *testing.T) {
	it := InstanceType{Name: "m5.large", Family: "m5", Category: "m", Generation: 5, Size: "large", Architecture: ArchAMD64, VCPU: 2, MemoryMiB: 8192, MaxPods: 29}.CloudInstanceType("us-west-2")
	for _, key := range []string{v1.LabelInstanceGPUName, v1.LabelInstanceHypervisor, v1.LabelInstanceAcceleratorCount} {
		want := scheduling.NewRequirements(scheduling.NewRequirement(key, corev1.NodeSelectorOpIn, "a10g"))
		if it.Requirements.Intersects(want) == nil {
			t.Errorf("m5.large satisfies %s In [a10g]", key)
		}
		absent := scheduling.NewRequirements(scheduling.NewRequirement(key, corev1.NodeSelectorOpDoesNotExist))
		if err := it.Requirements.Intersects(absent); err != nil {
			t.Errorf("m5.large does not satisfy %s DoesNotExist: %v", key, err)
		}
	}
	if labels := it.Requirements.Labels(); labels[v1.LabelInstanceGPUName] != "" || len(labels) != 10 {
		t.Errorf("labels %v, want the type's 9 and the region only", labels)
	}
}
