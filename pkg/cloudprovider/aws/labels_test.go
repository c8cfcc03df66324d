package aws

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// The labels of a node of each type, as the reference's
// computeRequirements sets them on its fake types (suite_test.go "should
// support well known labels" and the fake DescribeInstanceTypes data);
// network bandwidth from AWS's published baseline (bandwidth.json).
func TestRequirementsLabels(t *testing.T) {
	for _, tc := range []struct {
		name string
		want map[string]string
	}{
		{"g4dn.8xlarge", map[string]string{
			v1.LabelInstanceType: "g4dn.8xlarge", v1.LabelArch: "amd64", v1.LabelOS: "linux", v1.LabelRegion: "us-west-2",
			v1.LabelInstanceCategory: "g", v1.LabelInstanceFamily: "g4dn", v1.LabelInstanceGeneration: "4", v1.LabelInstanceSize: "8xlarge",
			v1.LabelInstanceCPU: "32", v1.LabelInstanceCPUManufacturer: "intel", v1.LabelInstanceCPUSustainedClockSpeedMhz: "2500",
			v1.LabelInstanceMemory: "131072", v1.LabelInstanceEBSBandwidth: "9500", v1.LabelInstanceNetworkBandwidth: "50000",
			v1.LabelInstanceLocalNVME: "900", v1.LabelInstanceHypervisor: "nitro", v1.LabelInstanceEncryptionInTransitSupported: "true",
			v1.LabelInstanceCapabilityFlex: "false", v1.LabelInstanceTenancy: "default",
			v1.LabelInstanceGPUName: "t4", v1.LabelInstanceGPUManufacturer: "nvidia", v1.LabelInstanceGPUCount: "1", v1.LabelInstanceGPUMemory: "16384",
		}},
		{"g4ad.16xlarge", map[string]string{
			v1.LabelInstanceType: "g4ad.16xlarge", v1.LabelArch: "amd64", v1.LabelOS: "linux", v1.LabelRegion: "us-west-2",
			v1.LabelInstanceCategory: "g", v1.LabelInstanceFamily: "g4ad", v1.LabelInstanceGeneration: "4", v1.LabelInstanceSize: "16xlarge",
			v1.LabelInstanceCPU: "64", v1.LabelInstanceCPUManufacturer: "amd", v1.LabelInstanceCPUSustainedClockSpeedMhz: "3000",
			v1.LabelInstanceMemory: "262144", v1.LabelInstanceEBSBandwidth: "6300", v1.LabelInstanceNetworkBandwidth: "25000",
			v1.LabelInstanceLocalNVME: "2400", v1.LabelInstanceHypervisor: "nitro", v1.LabelInstanceEncryptionInTransitSupported: "true",
			v1.LabelInstanceCapabilityFlex: "false", v1.LabelInstanceTenancy: "default",
			v1.LabelInstanceGPUName: "radeon-pro-v520", v1.LabelInstanceGPUManufacturer: "amd", v1.LabelInstanceGPUCount: "4", v1.LabelInstanceGPUMemory: "8192",
		}},
		{"inf2.xlarge", map[string]string{
			v1.LabelInstanceType: "inf2.xlarge", v1.LabelArch: "amd64", v1.LabelOS: "linux", v1.LabelRegion: "us-west-2",
			v1.LabelInstanceCategory: "inf", v1.LabelInstanceFamily: "inf2", v1.LabelInstanceGeneration: "2", v1.LabelInstanceSize: "xlarge",
			v1.LabelInstanceCPU: "4", v1.LabelInstanceCPUManufacturer: "amd", v1.LabelInstanceCPUSustainedClockSpeedMhz: "3600",
			v1.LabelInstanceMemory: "16384", v1.LabelInstanceEBSBandwidth: "10000", v1.LabelInstanceNetworkBandwidth: "2083",
			v1.LabelInstanceHypervisor: "nitro", v1.LabelInstanceEncryptionInTransitSupported: "true",
			v1.LabelInstanceCapabilityFlex: "false", v1.LabelInstanceTenancy: "default",
			v1.LabelInstanceAcceleratorName: "inferentia2", v1.LabelInstanceAcceleratorManufacturer: "aws", v1.LabelInstanceAcceleratorCount: "1",
		}},
		{"m7i-flex.large", map[string]string{
			v1.LabelInstanceType: "m7i-flex.large", v1.LabelArch: "amd64", v1.LabelOS: "linux", v1.LabelRegion: "us-west-2",
			v1.LabelInstanceCategory: "m", v1.LabelInstanceFamily: "m7i-flex", v1.LabelInstanceGeneration: "7", v1.LabelInstanceSize: "large",
			v1.LabelInstanceCPU: "2", v1.LabelInstanceCPUManufacturer: "intel", v1.LabelInstanceCPUSustainedClockSpeedMhz: "3200",
			v1.LabelInstanceMemory: "8192", v1.LabelInstanceEBSBandwidth: "10000", v1.LabelInstanceNetworkBandwidth: "390",
			v1.LabelInstanceHypervisor: "nitro", v1.LabelInstanceEncryptionInTransitSupported: "true",
			v1.LabelInstanceCapabilityFlex: "true", v1.LabelInstanceTenancy: "default",
		}},
		{"c6g.large", map[string]string{
			v1.LabelInstanceType: "c6g.large", v1.LabelArch: "arm64", v1.LabelOS: "linux", v1.LabelRegion: "us-west-2",
			v1.LabelInstanceCategory: "c", v1.LabelInstanceFamily: "c6g", v1.LabelInstanceGeneration: "6", v1.LabelInstanceSize: "large",
			v1.LabelInstanceCPU: "2", v1.LabelInstanceCPUManufacturer: "aws", v1.LabelInstanceCPUSustainedClockSpeedMhz: "2500",
			v1.LabelInstanceMemory: "4096", v1.LabelInstanceEBSBandwidth: "4750", v1.LabelInstanceNetworkBandwidth: "750",
			v1.LabelInstanceHypervisor: "nitro", v1.LabelInstanceEncryptionInTransitSupported: "false",
			v1.LabelInstanceCapabilityFlex: "false", v1.LabelInstanceTenancy: "default",
		}},
	} {
		reqs := requirements(describe(tc.name), "us-west-2", awsv1.AMIFamilyAL2023, bandwidths(t))
		got := reqs.Labels()
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
		for k, v := range got {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("%s: %s=%q is not a label value: %v", tc.name, k, v, errs)
			}
		}
	}
}

// Every type-level well-known label is either the type's value or
// required absent, so a NodePool requirement on it filters types.
func TestRequirementsFilter(t *testing.T) {
	in := func(key string, values ...string) scheduling.Requirements {
		return scheduling.NewRequirements(scheduling.NewRequirement(key, "In", values...))
	}
	for _, tc := range []struct {
		name   string
		family string
		reqs   scheduling.Requirements
		want   bool
	}{
		{"m5.large", awsv1.AMIFamilyAL2023, in(v1.LabelInstanceHypervisor, "nitro"), true},
		{"m5.metal", awsv1.AMIFamilyAL2023, in(v1.LabelInstanceHypervisor, "nitro"), false},
		{"m5.large", awsv1.AMIFamilyAL2023, in(v1.LabelInstanceGPUName, "t4"), false},
		{"m5.large", awsv1.AMIFamilyAL2023, in(v1.LabelInstanceAcceleratorManufacturer, "aws"), false},
		{"trn1.2xlarge", awsv1.AMIFamilyAL2023, in(v1.LabelInstanceAcceleratorManufacturer, "aws"), true},
		{"m5.large", awsv1.AMIFamilyAL2023, in(v1.LabelInstanceLocalNVME, "900"), false},
		{"m5.large", awsv1.AMIFamilyAL2023, in(v1.LabelInstanceTenancy, "dedicated"), false},
		{"m5.large", awsv1.AMIFamilyAL2023, in(v1.LabelWindowsBuild, "10.0.20348"), false},
		{"m5.large", awsv1.AMIFamilyWindows2022, in(v1.LabelWindowsBuild, "10.0.20348"), true},
		{"m5.large", awsv1.AMIFamilyWindows2022, in(v1.LabelOS, "windows"), true},
		{"c6g.large", awsv1.AMIFamilyWindows2022, in(v1.LabelOS, "windows"), false},
	} {
		err := requirements(describe(tc.name), "us-west-2", tc.family, bandwidths(t)).Intersects(tc.reqs)
		if got := err == nil; got != tc.want {
			t.Errorf("%s (%s) allows %s: %t, want %t", tc.name, tc.family, tc.reqs, got, tc.want)
		}
	}
	reqs := requirements(describe("m5.large"), "us-west-2", awsv1.AMIFamilyAL2023, bandwidths(t))
	for _, key := range scheduling.InstanceTypeLabels() {
		if !reqs.Has(key) {
			t.Errorf("m5.large has no requirement on %s", key)
		}
	}
}

// bandwidths is the embedded bandwidth table.
func bandwidths(t *testing.T) map[string]int64 {
	t.Helper()
	b, err := networkBandwidths()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A bandwidth file that does not decode, or lists nothing, is an error
// the provider's constructor returns, not a panic at package load.
func TestParseBandwidths(t *testing.T) {
	got, err := parseBandwidths([]byte(`{"source": "AWS", "megabits": {"m5.large": 750}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{"m5.large": 750}, got); diff != "" {
		t.Error(diff)
	}
	for _, bad := range []string{`{"megabits": {"m5.large": "fast"}}`, `{"megabits": {}}`, `not json`} {
		if _, err := parseBandwidths([]byte(bad)); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}
