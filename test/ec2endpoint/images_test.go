package ec2endpoint_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
)

// images pages through DescribeImages and returns the names.
func images(t *testing.T, f *fixture, in *ec2.DescribeImagesInput) []ec2types.Image {
	t.Helper()
	var out []ec2types.Image
	pager := ec2.NewDescribeImagesPaginator(f.client, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Images...)
	}
	return out
}

func names(imgs []ec2types.Image) []string {
	var out []string
	for _, img := range imgs {
		out = append(out, *img.Name)
	}
	return out
}

func TestDescribeImages(t *testing.T) {
	f := newFixture(t, profile())
	for _, tc := range []struct {
		name string
		in   *ec2.DescribeImagesInput
		want []string
	}{
		{"al2023 standard x86 by name", &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{filter("name", "amazon-eks-node-al2023-x86_64-standard-1.37-*")}},
			[]string{"amazon-eks-node-al2023-x86_64-standard-1.37-v20250110", "amazon-eks-node-al2023-x86_64-standard-1.37-v20250610"}},
		{"bottlerocket arm64", &ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("name", "bottlerocket-aws-k8s-1.37-*"), filter("architecture", "arm64")}},
			[]string{"bottlerocket-aws-k8s-1.37-aarch64-v1.30.0-5f3a9ef6", "bottlerocket-aws-k8s-1.37-nvidia-aarch64-v1.30.0-5f3a9ef6",
				"bottlerocket-aws-k8s-1.37-aarch64-v1.40.0-8b2d1a07", "bottlerocket-aws-k8s-1.37-nvidia-aarch64-v1.40.0-8b2d1a07"}},
		{"the account's by tag", &ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "test-cluster")}},
			[]string{"test-cluster-custom-al2023-x86_64"}},
		{"self", &ec2.DescribeImagesInput{Owners: []string{"self"}}, []string{"test-cluster-custom-al2023-x86_64"}},
		{"owner id and one character wildcard", &ec2.DescribeImagesInput{Owners: []string{"602401143452"}, Filters: []ec2types.Filter{filter("name", "amazon-eks-node-al2023-arm64-nvidia-1.37-v2025?610")}},
			[]string{"amazon-eks-node-al2023-arm64-nvidia-1.37-v20250610"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, names(images(t, f, tc.in))); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
		})
	}
}

// A provider picks the newest image by CreationDate; the image it then
// asks for by id is the one it saw.
func TestNewestImageByCreationDate(t *testing.T) {
	f := newFixture(t, profile())
	imgs := images(t, f, &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{filter("name", "amazon-eks-node-al2023-x86_64-standard-*")}})
	newest := slices.MaxFunc(imgs, func(a, b ec2types.Image) int {
		ta, _ := time.Parse(time.RFC3339, *a.CreationDate)
		tb, _ := time.Parse(time.RFC3339, *b.CreationDate)
		return ta.Compare(tb)
	})
	if !strings.HasSuffix(*newest.Name, "v20250610") || newest.State != ec2types.ImageStateAvailable || *newest.ImageOwnerAlias != "amazon" {
		t.Fatalf("newest %s (%s, owner %s)", *newest.Name, newest.State, *newest.ImageOwnerAlias)
	}
	got := images(t, f, &ec2.DescribeImagesInput{ImageIds: []string{*newest.ImageId}})
	if len(got) != 1 || *got[0].Name != *newest.Name || got[0].Architecture != ec2types.ArchitectureValuesX8664 {
		t.Errorf("by id: %v", names(got))
	}
}

func TestDescribeImagesPagesAndErrors(t *testing.T) {
	f := newFixture(t, profile())
	all := images(t, f, &ec2.DescribeImagesInput{})
	paged := images(t, f, &ec2.DescribeImagesInput{MaxResults: aws.Int32(6)})
	// 2 releases × 2 architectures × (2 AL2023 + 2 Bottlerocket variants)
	// for one Kubernetes version, the account's own, and 2 releases of
	// AL2023's x86_64 neuron variant.
	if len(all) != 19 || !cmp.Equal(names(all), names(paged)) {
		t.Errorf("%d images, paged %d", len(all), len(paged))
	}
	ctx := context.Background()
	for _, tc := range []struct {
		ids  []string
		want string
	}{
		{[]string{"ami-0000000000000ffff"}, "InvalidAMIID.NotFound"},
		{[]string{"image-1"}, "InvalidAMIID.Malformed"},
	} {
		_, err := f.client.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: tc.ids})
		if code := apiCode(t, err); code != tc.want {
			t.Errorf("%v: %q, want %q", tc.ids, code, tc.want)
		}
	}
}
