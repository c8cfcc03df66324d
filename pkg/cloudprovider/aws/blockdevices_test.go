package aws

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// The reference's default mappings per AMI family
// (pkg/providers/amifamily/*.go DefaultBlockDeviceMappings, with
// resolver.go DefaultEBS: gp3, encrypted, 20Gi).
func TestDefaultBlockDeviceMappings(t *testing.T) {
	ebs := func(size string) *awsv1.BlockDevice {
		return &awsv1.BlockDevice{Encrypted: ptr.To(true), VolumeType: ptr.To("gp3"), VolumeSize: ptr.To(resource.MustParse(size))}
	}
	for _, tc := range []struct {
		family string
		want   []awsv1.BlockDeviceMapping
	}{
		{awsv1.AMIFamilyAL2, []awsv1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/xvda"), EBS: ebs("20Gi")}}},
		{awsv1.AMIFamilyAL2023, []awsv1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/xvda"), EBS: ebs("20Gi")}}},
		{awsv1.AMIFamilyBottlerocket, []awsv1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/xvda"), EBS: ebs("4Gi")}, {DeviceName: ptr.To("/dev/xvdb"), EBS: ebs("20Gi")}}},
		{awsv1.AMIFamilyWindows2019, []awsv1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/sda1"), EBS: ebs("50Gi")}}},
		{awsv1.AMIFamilyWindows2022, []awsv1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/sda1"), EBS: ebs("50Gi")}}},
		{awsv1.AMIFamilyWindows2025, []awsv1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/sda1"), EBS: ebs("50Gi")}}},
		{awsv1.AMIFamilyCustom, nil},
	} {
		if diff := cmp.Diff(tc.want, defaultBlockDeviceMappings(tc.family)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.family, diff)
		}
	}
}

func nodeClass(family string, mappings ...awsv1.BlockDeviceMapping) *awsv1.EC2NodeClass {
	return &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{AMIFamily: ptr.To(family), BlockDeviceMappings: mappings}}
}

func mapping(device, size string, root bool) awsv1.BlockDeviceMapping {
	m := awsv1.BlockDeviceMapping{RootVolume: root, EBS: &awsv1.BlockDevice{}}
	if device != "" {
		m.DeviceName = ptr.To(device)
	}
	if size != "" {
		m.EBS.VolumeSize = ptr.To(resource.MustParse(size))
	}
	return m
}

// Expected sizes follow the reference's ephemeralStorage
// (pkg/providers/instancetype/types.go) and its test cases
// (instancetype/suite_test.go "Ephemeral Storage").
func TestRootVolumeSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		nc   *awsv1.EC2NodeClass
		want string
	}{
		{"AL2023 default", nodeClass(awsv1.AMIFamilyAL2023), "20Gi"},
		{"AL2 default", nodeClass(awsv1.AMIFamilyAL2), "20Gi"},
		{"Bottlerocket default: the data volume", nodeClass(awsv1.AMIFamilyBottlerocket), "20Gi"},
		{"Windows default", nodeClass(awsv1.AMIFamilyWindows2022), "50Gi"},
		{"Custom without mappings", nodeClass(awsv1.AMIFamilyCustom), "20Gi"},
		{"rootVolume wins", nodeClass(awsv1.AMIFamilyAL2023, mapping("/dev/xvda", "30Gi", false), mapping("/dev/xvdc", "100Gi", true)), "100Gi"},
		{"the family's device", nodeClass(awsv1.AMIFamilyAL2023, mapping("/dev/xvdc", "30Gi", false), mapping("/dev/xvda", "100Gi", false)), "100Gi"},
		{"Bottlerocket's data device", nodeClass(awsv1.AMIFamilyBottlerocket, mapping("/dev/xvda", "4Gi", false), mapping("/dev/xvdb", "200Gi", false)), "200Gi"},
		{"no mapping on the family's device: its default", nodeClass(awsv1.AMIFamilyAL2023, mapping("/dev/xvdc", "300Gi", false)), "20Gi"},
		{"Windows without its device: its default", nodeClass(awsv1.AMIFamilyWindows2019, mapping("/dev/xvdc", "300Gi", false)), "50Gi"},
		{"Custom: the last mapping", nodeClass(awsv1.AMIFamilyCustom, mapping("/dev/xvda", "30Gi", false), mapping("/dev/xvdb", "60Gi", false)), "60Gi"},
		{"Custom: the last mapping has no size", nodeClass(awsv1.AMIFamilyCustom, mapping("/dev/xvda", "30Gi", false), mapping("/dev/xvdb", "", false)), "20Gi"},
		{"a snapshot-only root volume: the family's device", nodeClass(awsv1.AMIFamilyAL2023, mapping("/dev/xvdc", "", true), mapping("/dev/xvda", "40Gi", false)), "40Gi"},
		{"G sizes stay decimal", nodeClass(awsv1.AMIFamilyAL2023, mapping("/dev/xvda", "50G", true)), "50G"},
	} {
		got := rootVolumeSize(tc.nc)
		if want := resource.MustParse(tc.want); got.Cmp(want) != 0 {
			t.Errorf("%s: %s, want %s", tc.name, got.String(), tc.want)
		}
	}
}
