package ec2endpoint_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
)

// amiX86 is the first synthesized AMI, AL2023 standard x86_64.
const amiX86 = "ami-00000000000000001"

// createTemplate creates a launch template on amiX86 with the nodes'
// security group, as a Karpenter-style provider does, and returns its
// name; mod changes its data first.
func createTemplate(t *testing.T, f *fixture, name string, mod func(*ec2types.RequestLaunchTemplateData)) string {
	t.Helper()
	data := &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amiX86), SecurityGroupIds: []string{"sg-00000000000000002"}, UserData: aws.String(nodeConfigUserData("test-cluster"))}
	if mod != nil {
		mod(data)
	}
	_, err := f.client.CreateLaunchTemplate(context.Background(), &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name), LaunchTemplateData: data,
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: []ec2types.Tag{
			{Key: aws.String("karpenter.k8s.aws/cluster"), Value: aws.String("test-cluster")},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func TestLaunchTemplates(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	createTemplate(t, f, "capstan/test-cluster/0123", nil)
	createTemplate(t, f, "capstan/test-cluster/4567", nil)
	_, err := f.client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String("other"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amiX86)},
	})
	if err != nil {
		t.Fatal(err)
	}
	list := func(in *ec2.DescribeLaunchTemplatesInput) []string {
		t.Helper()
		var out []string
		pager := ec2.NewDescribeLaunchTemplatesPaginator(f.client, in)
		for pager.HasMorePages() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, lt := range page.LaunchTemplates {
				out = append(out, *lt.LaunchTemplateId+" "+*lt.LaunchTemplateName)
				if *lt.LatestVersionNumber != 1 || *lt.DefaultVersionNumber != 1 || !lt.CreateTime.Equal(f.clock.Now()) {
					t.Errorf("template %+v", lt)
				}
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   *ec2.DescribeLaunchTemplatesInput
		want []string
	}{
		{"cluster tag, paged", &ec2.DescribeLaunchTemplatesInput{MaxResults: aws.Int32(1), Filters: []ec2types.Filter{filter("tag:karpenter.k8s.aws/cluster", "test-cluster")}},
			[]string{"lt-00000000000000001 capstan/test-cluster/0123", "lt-00000000000000002 capstan/test-cluster/4567"}},
		{"by name", &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"other"}}, []string{"lt-00000000000000003 other"}},
		{"by id", &ec2.DescribeLaunchTemplatesInput{LaunchTemplateIds: []string{"lt-00000000000000002"}}, []string{"lt-00000000000000002 capstan/test-cluster/4567"}},
		{"name filter", &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{filter("launch-template-name", "capstan/*")}},
			[]string{"lt-00000000000000001 capstan/test-cluster/0123", "lt-00000000000000002 capstan/test-cluster/4567"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, list(tc.in)); diff != "" {
				t.Errorf("templates (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := f.client.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String("other")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"name taken", func() error {
			_, err := f.client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
				LaunchTemplateName: aws.String("capstan/test-cluster/0123"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amiX86)},
			})
			return err
		}, "InvalidLaunchTemplateName.AlreadyExistsException"},
		{"bad name", func() error {
			_, err := f.client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
				LaunchTemplateName: aws.String("a b"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amiX86)},
			})
			return err
		}, "InvalidLaunchTemplateName.MalformedException"},
		{"deleted by name", func() error {
			_, err := f.client.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"other"}})
			return err
		}, "InvalidLaunchTemplateName.NotFoundException"},
		{"deleted by id", func() error {
			_, err := f.client.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String("lt-00000000000000003")})
			return err
		}, "InvalidLaunchTemplateId.NotFound"},
		{"malformed id", func() error {
			_, err := f.client.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateIds: []string{"template-1"}})
			return err
		}, "InvalidLaunchTemplateId.Malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := apiCode(t, tc.call()); got != tc.want {
				t.Errorf("code %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTaggingLaunchTemplates(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	createTemplate(t, f, "tagged", nil)
	if _, err := f.client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{"lt-00000000000000001"}, Tags: []ec2types.Tag{{Key: aws.String("owner"), Value: aws.String("me")}}}); err != nil {
		t.Fatal(err)
	}
	out, err := f.client.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{filter("tag:owner", "me")}})
	if err != nil || len(out.LaunchTemplates) != 1 || len(out.LaunchTemplates[0].Tags) != 2 {
		t.Errorf("tagged template: %+v, %v", out, err)
	}
}
