package ec2endpoint_test

import (
	"fmt"

	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	v1 "github.com/capstan-dev/capstan/api/v1"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
)

// The types with several network cards, accelerators of every kind and
// a paravirtual Xen type, as EC2 describes them. Expected values are
// AWS's published data: the network cards and the VPC CNI's pod limit on
// the default card from the reference's
// pkg/providers/instancetype/zz_generated.vpclimits.go (v1.14.1: p5 100,
// p4d 737, trn1.32xlarge 247, c6in.32xlarge 394), accelerators from its
// pkg/fake/zz_generated.describe_instance_types.go and AWS's instance
// type specifications.
func TestDescribeInstanceTypesPublished(t *testing.T) {
	f := newFixture(t, profile())
	names := []ec2types.InstanceType{"c6in.32xlarge", "dl1.24xlarge", "g4ad.16xlarge", "g5.12xlarge", "inf1.xlarge", "inf2.24xlarge", "m5.large", "p4d.24xlarge", "p5.48xlarge", "t1.micro", "trn1.32xlarge"}
	got, _ := instanceTypes(t, f, &ec2.DescribeInstanceTypesInput{InstanceTypes: names})
	type summary struct {
		Name, Hypervisor       string
		Virtualization         []ec2types.VirtualizationType
		Architectures          []ec2types.ArchitectureType
		Cards, DefaultCardENIs int32
		// DefaultCardPods is the VPC CNI's limit on the default card.
		DefaultCardPods int32
		EFA             int32
		Accelerator     string
		NVMeGB          int64
		EBSMaxMbps      int32
	}
	var sums []summary
	for _, it := range got {
		ni := it.NetworkInfo
		def := ni.NetworkCards[*ni.DefaultNetworkCardIndex]
		s := summary{
			Name: string(it.InstanceType), Hypervisor: string(it.Hypervisor), Virtualization: it.SupportedVirtualizationTypes,
			Architectures: it.ProcessorInfo.SupportedArchitectures,
			Cards:         *ni.MaximumNetworkCards, DefaultCardENIs: *def.MaximumNetworkInterfaces,
			DefaultCardPods: *def.MaximumNetworkInterfaces*(*ni.Ipv4AddressesPerInterface-1) + 2,
		}
		if ni.EfaInfo != nil {
			s.EFA = *ni.EfaInfo.MaximumEfaInterfaces
		}
		if g := it.GpuInfo; g != nil {
			s.Accelerator = fmt.Sprintf("%dx %s %s %dMiB", *g.Gpus[0].Count, *g.Gpus[0].Manufacturer, *g.Gpus[0].Name, *g.Gpus[0].MemoryInfo.SizeInMiB)
		}
		if n := it.NeuronInfo; n != nil {
			d := n.NeuronDevices[0]
			s.Accelerator = fmt.Sprintf("%dx %s %d cores v%d %dMiB", *d.Count, *d.Name, *d.CoreInfo.Count, *d.CoreInfo.Version, *d.MemoryInfo.SizeInMiB)
		}
		if it.InstanceStorageInfo != nil {
			s.NVMeGB = *it.InstanceStorageInfo.TotalSizeInGB
		}
		if e := it.EbsInfo.EbsOptimizedInfo; e != nil {
			s.EBSMaxMbps = *e.MaximumBandwidthInMbps
		}
		sums = append(sums, s)
	}
	hvm, x86 := []ec2types.VirtualizationType{"hvm"}, []ec2types.ArchitectureType{"x86_64"}
	want := []summary{
		{"c6in.32xlarge", "nitro", hvm, x86, 2, 8, 394, 2, "", 0, 80000},
		{"dl1.24xlarge", "nitro", hvm, x86, 4, 15, 737, 4, "8x Habana Gaudi HL-205 32768MiB", 4000, 19000},
		{"g4ad.16xlarge", "nitro", hvm, x86, 1, 8, 234, 0, "4x AMD Radeon Pro V520 8192MiB", 2400, 6300},
		{"g5.12xlarge", "nitro", hvm, x86, 1, 15, 737, 1, "4x NVIDIA A10G 22888MiB", 3800, 0},
		{"inf1.xlarge", "nitro", hvm, x86, 1, 4, 38, 0, "1x Inferentia 4 cores v1 8192MiB", 0, 4750},
		{"inf2.24xlarge", "nitro", hvm, x86, 1, 15, 737, 0, "6x Inferentia2 2 cores v2 32768MiB", 0, 30000},
		{"m5.large", "nitro", hvm, x86, 1, 3, 29, 0, "", 0, 0},
		{"p4d.24xlarge", "nitro", hvm, x86, 4, 15, 737, 4, "8x NVIDIA A100 40960MiB", 8000, 0},
		{"p5.48xlarge", "nitro", hvm, x86, 32, 2, 100, 32, "8x NVIDIA H100 81920MiB", 30400, 0},
		{"t1.micro", "xen", []ec2types.VirtualizationType{"paravirtual"}, []ec2types.ArchitectureType{"i386", "x86_64"}, 1, 2, 4, 0, "", 0, 0},
		{"trn1.32xlarge", "nitro", hvm, x86, 8, 5, 247, 8, "16x Trainium 2 cores v2 32768MiB", 7600, 80000},
	}
	if diff := cmp.Diff(want, sums); diff != "" {
		t.Errorf("instance types (-want +got):\n%s", diff)
	}
}

// The EFA interfaces of the served g5, g6 and g6e sizes, as AWS's
// "Elastic Fabric Adapter supported instance types" lists them (g5.12xlarge
// also in the reference's fake DescribeInstanceTypes data): 1 from
// 8xlarge up, g6e.24xlarge 2, g6e.48xlarge 4; none below 8xlarge.
func TestDescribeInstanceTypesEFA(t *testing.T) {
	want := map[string]int32{
		"g5.4xlarge": 0, "g5.8xlarge": 1, "g5.12xlarge": 1, "g5.16xlarge": 1, "g5.24xlarge": 1, "g5.48xlarge": 1,
		"g6.4xlarge": 0, "g6.8xlarge": 1, "g6.12xlarge": 1, "g6.16xlarge": 1, "g6.24xlarge": 1, "g6.48xlarge": 1,
		"g6e.4xlarge": 0, "g6e.8xlarge": 1, "g6e.12xlarge": 1, "g6e.16xlarge": 1, "g6e.24xlarge": 2, "g6e.48xlarge": 4,
	}
	var names []ec2types.InstanceType
	for name := range want {
		names = append(names, ec2types.InstanceType(name))
	}
	got, _ := instanceTypes(t, newFixture(t, profile()), &ec2.DescribeInstanceTypesInput{InstanceTypes: names})
	efa := map[string]int32{}
	for _, it := range got {
		efa[string(it.InstanceType)] = 0
		if e := it.NetworkInfo.EfaInfo; e != nil {
			efa[string(it.InstanceType)] = *e.MaximumEfaInterfaces
		}
	}
	if diff := cmp.Diff(want, efa); diff != "" {
		t.Errorf("EFA interfaces (-want +got):\n%s", diff)
	}
}

// An HVM image does not run on paravirtual-only t1.micro: its override
// fails with EC2's answer and the fleet launches the other.
func TestFleetRefusesHVMOnParavirtual(t *testing.T) {
	f := newFixture(t, profile())
	lt := createTemplate(t, f, "hvm", nil)
	out := launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override("t1.micro", subnetA), override("m5.large", subnetA)))
	if len(out.Instances) != 1 || out.Instances[0].InstanceType != "m5.large" {
		t.Fatalf("launched %+v, want one m5.large", out.Instances)
	}
	if len(out.Errors) != 1 || *out.Errors[0].ErrorCode != "InvalidParameterCombination" || out.Errors[0].LaunchTemplateAndOverrides.Overrides.InstanceType != "t1.micro" {
		t.Errorf("errors %+v, want t1.micro's InvalidParameterCombination", out.Errors)
	}
}
