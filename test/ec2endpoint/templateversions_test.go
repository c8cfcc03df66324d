package ec2endpoint_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// DescribeLaunchTemplateVersions shows the block devices a template maps,
// as given.
func TestDescribeLaunchTemplateVersions(t *testing.T) {
	f := newFixture(t, profile())
	lt := createTemplate(t, f, "versions", func(d *ec2types.RequestLaunchTemplateData) {
		d.BlockDeviceMappings = []ec2types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: aws.String("/dev/xvda"), Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{
			Encrypted: aws.Bool(true), VolumeSize: aws.Int32(100), VolumeType: ec2types.VolumeTypeGp3,
		}}}
	})
	out, err := f.client.DescribeLaunchTemplateVersions(context.Background(), &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String(lt), Versions: []string{"$Latest"}})
	if err != nil || len(out.LaunchTemplateVersions) != 1 {
		t.Fatalf("versions %+v, %v", out, err)
	}
	v := out.LaunchTemplateVersions[0]
	bdm := v.LaunchTemplateData.BlockDeviceMappings
	if *v.VersionNumber != 1 || *v.LaunchTemplateData.ImageId != amiX86 || len(bdm) != 1 || *bdm[0].DeviceName != "/dev/xvda" ||
		*bdm[0].Ebs.VolumeSize != 100 || bdm[0].Ebs.VolumeType != ec2types.VolumeTypeGp3 || !*bdm[0].Ebs.Encrypted {
		t.Errorf("version %+v, block devices %+v", v, bdm)
	}
	_, err = f.client.DescribeLaunchTemplateVersions(context.Background(), &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String(lt), Versions: []string{"2"}})
	if code := apiCode(t, err); code != "InvalidLaunchTemplateId.VersionNotFound" {
		t.Errorf("version 2: %q", code)
	}
}
