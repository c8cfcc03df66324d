package aws

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
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

func (a *typesAPI) DescribeInstanceTypeOfferings(_ context.Context, _ *ec2.DescribeInstanceTypeOfferingsInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstanceTypeOfferingsOutput, error) {
	out := &ec2.DescribeInstanceTypeOfferingsOutput{}
	for _, info := range a.info {
		out.InstanceTypeOfferings = append(out.InstanceTypeOfferings, ec2types.InstanceTypeOffering{InstanceType: info.InstanceType, Location: awssdk.String("us-west-2a")})
	}
	return out, nil
}

func (a *typesAPI) DescribeSpotPriceHistory(context.Context, *ec2.DescribeSpotPriceHistoryInput, ...func(*ec2.Options)) (*ec2.DescribeSpotPriceHistoryOutput, error) {
	return &ec2.DescribeSpotPriceHistoryOutput{}, nil
}

func (a *typesAPI) DescribeCapacityReservations(context.Context, *ec2.DescribeCapacityReservationsInput, ...func(*ec2.Options)) (*ec2.DescribeCapacityReservationsOutput, error) {
	return &ec2.DescribeCapacityReservationsOutput{}, nil
}

// oneClass is a NodeClasses holding one Ready class.
type oneClass struct{ nc *awsv1.EC2NodeClass }

func (o oneClass) EC2NodeClass(context.Context, string) (*awsv1.EC2NodeClass, error) {
	return o.nc, nil
}

// GetInstanceTypes end to end over EC2's descriptions: the pod limit of
// the default network card (zz_generated.vpclimits.go), instance-memory
// before overhead, kube-reserved memory from the ENI limit whatever
// maxPods says, and the hypervisor as a filtering requirement.
func TestGetInstanceTypesAsTheReference(t *testing.T) {
	api := &typesAPI{info: []ec2types.InstanceTypeInfo{describe("p5.48xlarge"), describe("p4d.24xlarge"), describe("m5.large"), describe("m5.metal")}}
	nc := nodeClass(awsv1.AMIFamilyAL2023)
	nc.Status.Subnets = []awsv1.Subnet{{ID: "subnet-a", Zone: "us-west-2a"}}
	nc.Status.Conditions = []metav1.Condition{{Type: awsv1.ConditionTypeReady, Status: metav1.ConditionTrue}}
	p, err := New(api, Options{Region: "us-west-2", ClusterName: "test", Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), NodeClasses: oneClass{nc},
		Cluster: KnownCluster{}, VMMemoryOverheadPercent: 0.075})
	if err != nil {
		t.Fatal(err)
	}
	np := &v1.NodePool{}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.SchemeGroupVersion.Group, Kind: NodeClassKind, Name: "default"}
	type shape struct {
		Pods, KubeReservedMiB int64
		Memory, Hypervisor    string
	}
	got := map[string]shape{}
	collect := func() {
		its, err := p.GetInstanceTypes(context.Background(), np)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range its {
			got[it.Name] = shape{it.Capacity.Pods().Value(), it.Overhead.KubeReserved.Memory().Value() >> 20,
				it.Requirements.Get(v1.LabelInstanceMemory).Any(), it.Requirements.Get(v1.LabelInstanceHypervisor).Any()}
		}
	}
	collect()
	want := map[string]shape{
		"p5.48xlarge":  {100, 11*100 + 255, "2097152", "nitro"},
		"p4d.24xlarge": {737, 11*737 + 255, "1179648", "nitro"},
		"m5.large":     {29, 11*29 + 255, "8192", "nitro"},
		"m5.metal":     {737, 11*737 + 255, "393216", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default class (-want +got):\n%s", diff)
	}
	nc.Spec.Kubelet = &awsv1.KubeletConfiguration{MaxPods: ptr.To[int32](110)}
	collect()
	if s := got["p4d.24xlarge"]; s.Pods != 110 || s.KubeReservedMiB != 11*737+255 {
		t.Errorf("p4d.24xlarge with maxPods 110: %+v, want 110 pods and kube-reserved for 737", s)
	}
}
