package ec2endpoint_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// A copy is the account's, created now, with the source's architecture;
// a selector on its name finds it, and fleets launch it. EC2's refusals:
// an unknown source, a name the account already uses, another region.
func TestCopyImage(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	f.clock.Step(time.Hour)
	out, err := f.client.CopyImage(ctx, &ec2.CopyImageInput{SourceImageId: aws.String(amiX86), SourceRegion: aws.String("us-west-2"), Name: aws.String("team-node-v2")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.client.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"self"}, Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"team-node-*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Images) != 1 || aws.ToString(got.Images[0].ImageId) != aws.ToString(out.ImageId) || got.Images[0].Architecture != ec2types.ArchitectureValuesX8664 ||
		aws.ToString(got.Images[0].CreationDate) != f.clock.Now().UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("copies found: %+v", got.Images)
	}
	lt := createTemplate(t, f, "copied", func(d *ec2types.RequestLaunchTemplateData) { d.ImageId = out.ImageId })
	if o := outcomeOf(launch(t, f, fleetInput(lt, "on-demand", override("m5.large", subnetA)))); o.Launched == "" {
		t.Errorf("the copy did not launch: %+v", o)
	}
	for _, tc := range []struct {
		name string
		in   *ec2.CopyImageInput
		want string
	}{
		{"unknown source", &ec2.CopyImageInput{SourceImageId: aws.String("ami-0000000000000ffff"), SourceRegion: aws.String("us-west-2"), Name: aws.String("x")}, "InvalidAMIID.NotFound"},
		{"name in use", &ec2.CopyImageInput{SourceImageId: aws.String(amiX86), SourceRegion: aws.String("us-west-2"), Name: aws.String("team-node-v2")}, "InvalidAMIName.Duplicate"},
		{"another region", &ec2.CopyImageInput{SourceImageId: aws.String(amiX86), SourceRegion: aws.String("eu-west-1"), Name: aws.String("y")}, "InvalidParameterValue"},
	} {
		if _, err := f.client.CopyImage(ctx, tc.in); apiCode(t, err) != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
}
