package aws

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// Devices the AMI families keep the kubelet's root directory on, and
// their default volume sizes, as the reference's AMI families define
// them (pkg/providers/amifamily/{al2,al2023,bottlerocket,windows}.go
// EphemeralBlockDevice and DefaultBlockDeviceMappings).
const (
	deviceXVDA = "/dev/xvda"
	deviceXVDB = "/dev/xvdb"
	deviceSDA1 = "/dev/sda1"
)

// defaultEBS is the volume the reference gives a family's default
// mappings (amifamily/resolver.go DefaultEBS): 20Gi of gp3, encrypted.
func defaultEBS(size string) *awsv1.BlockDevice {
	return &awsv1.BlockDevice{Encrypted: ptr.To(true), VolumeType: ptr.To("gp3"), VolumeSize: ptr.To(resource.MustParse(size))}
}

// defaultVolumeSize is DefaultEBS's size: ephemeral storage when nothing
// else names one (a Custom family without mappings).
const defaultVolumeSize = "20Gi"

// defaultBlockDeviceMappings are the volumes an instance of the AMI family
// gets when its EC2NodeClass sets none: AL2 and AL2023 one 20Gi root
// volume; Bottlerocket a 4Gi OS volume and a 20Gi data volume for the
// kubelet; Windows a 50Gi root volume; Custom none (the AMI's own).
func defaultBlockDeviceMappings(family string) []awsv1.BlockDeviceMapping {
	switch family {
	case awsv1.AMIFamilyAL2, awsv1.AMIFamilyAL2023:
		return []awsv1.BlockDeviceMapping{{DeviceName: ptr.To(deviceXVDA), EBS: defaultEBS(defaultVolumeSize)}}
	case awsv1.AMIFamilyBottlerocket:
		return []awsv1.BlockDeviceMapping{
			{DeviceName: ptr.To(deviceXVDA), EBS: defaultEBS("4Gi")},
			{DeviceName: ptr.To(deviceXVDB), EBS: defaultEBS(defaultVolumeSize)},
		}
	case awsv1.AMIFamilyWindows2019, awsv1.AMIFamilyWindows2022, awsv1.AMIFamilyWindows2025:
		return []awsv1.BlockDeviceMapping{{DeviceName: ptr.To(deviceSDA1), EBS: defaultEBS("50Gi")}}
	}
	return nil
}

// ephemeralBlockDevice is the device holding the family's kubelet root
// directory; "" for Custom, whose AMI Capstan does not know.
func ephemeralBlockDevice(family string) string {
	switch family {
	case awsv1.AMIFamilyAL2, awsv1.AMIFamilyAL2023:
		return deviceXVDA
	case awsv1.AMIFamilyBottlerocket:
		return deviceXVDB
	case awsv1.AMIFamilyWindows2019, awsv1.AMIFamilyWindows2022, awsv1.AMIFamilyWindows2025:
		return deviceSDA1
	}
	return ""
}

// rootVolumeSize is the size of the volume the kubelet's root directory
// (and so the node's ephemeral storage) lives on, as the reference reads
// it (pkg/providers/instancetype/types.go ephemeralStorage, without the
// instance store): the mapping marked rootVolume; for Custom the last
// mapping; else the mapping on the family's device; else the family's
// default for that device; else 20Gi.
func rootVolumeSize(nc *awsv1.EC2NodeClass) resource.Quantity {
	family, mappings := nc.AMIFamily(), nc.Spec.BlockDeviceMappings
	if len(mappings) > 0 {
		for _, m := range mappings {
			if m.RootVolume && m.EBS != nil && m.EBS.VolumeSize != nil {
				return *m.EBS.VolumeSize
			}
		}
		if family == awsv1.AMIFamilyCustom {
			if last := mappings[len(mappings)-1]; last.EBS != nil && last.EBS.VolumeSize != nil {
				return *last.EBS.VolumeSize
			}
			return resource.MustParse(defaultVolumeSize)
		}
		if size, ok := sizeOn(mappings, ephemeralBlockDevice(family)); ok {
			return size
		}
	}
	if size, ok := sizeOn(defaultBlockDeviceMappings(family), ephemeralBlockDevice(family)); ok {
		return size
	}
	return resource.MustParse(defaultVolumeSize)
}

// sizeOn is the size of the first mapping on device, if it sets one.
func sizeOn(mappings []awsv1.BlockDeviceMapping, device string) (resource.Quantity, bool) {
	for _, m := range mappings {
		if m.DeviceName == nil || *m.DeviceName != device {
			continue
		}
		if m.EBS == nil || m.EBS.VolumeSize == nil {
			return resource.Quantity{}, false
		}
		return *m.EBS.VolumeSize, true
	}
	return resource.Quantity{}, false
}
