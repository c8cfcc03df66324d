package aws

import (
	"context"
	"maps"
	"slices"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// typesAPI answers DescribeInstanceTypes with info, recording the request.
type typesAPI struct {
	EC2
	got  *ec2.DescribeInstanceTypesInput
	info []ec2types.InstanceTypeInfo
}

func (a *typesAPI) DescribeInstanceTypes(_ context.Context, in *ec2.DescribeInstanceTypesInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error) {
	a.got = in
	return &ec2.DescribeInstanceTypesOutput{InstanceTypes: a.info}, nil
}

// Types are asked for as the reference asks (instancetype.go
// UpdateInstanceTypes): HVM, x86_64 or arm64; one EC2 describes without
// an architecture Capstan launches is dropped all the same.
func TestDescribeTypesFilters(t *testing.T) {
	i386 := describe("m5.large")
	i386.InstanceType = "m5.xlarge"
	i386.ProcessorInfo = &ec2types.ProcessorInfo{SupportedArchitectures: []ec2types.ArchitectureType{ec2types.ArchitectureTypeI386}}
	api := &typesAPI{info: []ec2types.InstanceTypeInfo{describe("m5.large"), i386}}
	p := &Provider{ec2: api, opts: Options{Region: "us-west-2"}}
	c := &region{types: map[string]machine{}}
	if err := p.describeTypes(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	want := []ec2types.Filter{
		{Name: awssdk.String("supported-virtualization-type"), Values: []string{"hvm"}},
		{Name: awssdk.String("processor-info.supported-architecture"), Values: []string{"x86_64", "arm64"}},
	}
	if diff := cmp.Diff(want, api.got.Filters, cmpopts.IgnoreUnexported(ec2types.Filter{})); diff != "" {
		t.Errorf("filters (-want +got):\n%s", diff)
	}
	if _, ok := c.types["m5.xlarge"]; ok || len(c.types) != 1 {
		t.Errorf("types %v, want m5.large only", slices.Collect(maps.Keys(c.types)))
	}
}
