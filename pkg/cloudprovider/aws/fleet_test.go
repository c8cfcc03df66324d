package aws

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
)

// templates records the launch templates created; the other EC2 calls
// are not expected (the embedded nil interface panics if made).
type templates struct {
	EC2
	created []*ec2.CreateLaunchTemplateInput
}

func (f *templates) DescribeLaunchTemplates(context.Context, *ec2.DescribeLaunchTemplatesInput, ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplatesOutput, error) {
	return &ec2.DescribeLaunchTemplatesOutput{}, nil
}

func (f *templates) CreateLaunchTemplate(_ context.Context, in *ec2.CreateLaunchTemplateInput, _ ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error) {
	f.created = append(f.created, in)
	return &ec2.CreateLaunchTemplateOutput{}, nil
}

// noClasses has no EC2NodeClass: the request building under test is
// handed its class.
type noClasses struct{}

func (noClasses) EC2NodeClass(context.Context, string) (*awsv1.EC2NodeClass, error) {
	return nil, errors.New("not used")
}

func TestFleetRequest(t *testing.T) {
	class := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	class.Spec.AMIFamily = ptr.To(awsv1.AMIFamilyCustom)
	class.Spec.Tags = map[string]string{"team": "web", "Name": "web-node"}
	class.Spec.BlockDeviceMappings = []awsv1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/xvda"), EBS: &awsv1.BlockDevice{VolumeSize: ptr.To(resource.MustParse("19.5Gi"))}}}
	class.Status.Subnets = []awsv1.Subnet{{ID: "subnet-a", Zone: "zone-a"}, {ID: "subnet-a2", Zone: "zone-a"}, {ID: "subnet-b", Zone: "zone-b"}}
	class.Status.SecurityGroups = []awsv1.SecurityGroup{{ID: "sg-1"}, {ID: "sg-2"}}
	class.Status.AMIs = []awsv1.AMI{{ID: "ami-amd64", Requirements: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}}
	class.Status.InstanceProfile = "nodes"
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "web-abcde", UID: "uid-1", Labels: map[string]string{v1.NodePoolLabelKey: "web"}}}
	m5 := catalog.InstanceType{Name: "m5.large", Family: "m5", Category: "m", Generation: 5, Size: "large", Architecture: catalog.ArchAMD64, VCPU: 2, MemoryMiB: 8192, MaxPods: 29}.CloudInstanceType("us-west-2")
	c5 := catalog.InstanceType{Name: "c5.large", Family: "c5", Category: "c", Generation: 5, Size: "large", Architecture: catalog.ArchAMD64, VCPU: 2, MemoryMiB: 4096, MaxPods: 29}.CloudInstanceType("us-west-2")
	cand := func(it *cloudprovider.InstanceType, zone, ct, reservation string) cloudprovider.LaunchCandidate {
		return cloudprovider.LaunchCandidate{InstanceType: it, Offering: &cloudprovider.Offering{Zone: zone, CapacityType: ct, ReservationID: reservation}}
	}
	override := func(it, subnet, zone string) ec2types.FleetLaunchTemplateOverridesRequest {
		return ec2types.FleetLaunchTemplateOverridesRequest{InstanceType: ec2types.InstanceType(it), SubnetId: awssdk.String(subnet), AvailabilityZone: awssdk.String(zone)}
	}
	cases := []struct {
		name  string
		ct    string
		cands []cloudprovider.LaunchCandidate
		// want are the overrides of each launch template, in name order;
		// spot and the reservation each launch template targets.
		want        [][]ec2types.FleetLaunchTemplateOverridesRequest
		spot        bool
		reservation string
	}{
		{"spot: price-capacity-optimized over type × the zone's first subnet", v1.CapacityTypeSpot,
			[]cloudprovider.LaunchCandidate{cand(m5, "zone-a", v1.CapacityTypeSpot, ""), cand(c5, "zone-a", v1.CapacityTypeSpot, ""), cand(m5, "zone-b", v1.CapacityTypeSpot, ""), cand(m5, "zone-c", v1.CapacityTypeSpot, "")},
			[][]ec2types.FleetLaunchTemplateOverridesRequest{{override("m5.large", "subnet-a", "zone-a"), override("c5.large", "subnet-a", "zone-a"), override("m5.large", "subnet-b", "zone-b")}}, true, ""},
		{"on-demand: lowest price", v1.CapacityTypeOnDemand, []cloudprovider.LaunchCandidate{cand(c5, "zone-b", v1.CapacityTypeOnDemand, "")},
			[][]ec2types.FleetLaunchTemplateOverridesRequest{{override("c5.large", "subnet-b", "zone-b")}}, false, ""},
		{"reserved: on-demand into the reservation's own template", v1.CapacityTypeReserved, []cloudprovider.LaunchCandidate{cand(m5, "zone-a", v1.CapacityTypeReserved, "cr-1")},
			[][]ec2types.FleetLaunchTemplateOverridesRequest{{override("m5.large", "subnet-a", "zone-a")}}, false, "cr-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := &templates{}
			p, err := New(api, Options{Region: "us-west-2", ClusterName: "prod", Clock: clocktesting.NewFakeClock(time.Now()), NodeClasses: noClasses{}, Cluster: KnownCluster{}})
			if err != nil {
				t.Fatal(err)
			}
			in, byOverride, _, err := p.fleet(context.Background(), nc, class, tc.ct, tc.cands)
			if err != nil {
				t.Fatal(err)
			}
			// No token: the SDK makes one per call (see TestFleetClientTokenPerAttempt).
			if in.Type != ec2types.FleetTypeInstant || in.ClientToken != nil || awssdk.ToInt32(in.TargetCapacitySpecification.TotalTargetCapacity) != 1 {
				t.Errorf("type %s, client token %q, capacity %d: want an instant fleet of one, without a token", in.Type, awssdk.ToString(in.ClientToken), awssdk.ToInt32(in.TargetCapacitySpecification.TotalTargetCapacity))
			}
			wantDefault := ec2types.DefaultTargetCapacityTypeOnDemand
			if tc.spot {
				wantDefault = ec2types.DefaultTargetCapacityTypeSpot
				if in.SpotOptions == nil || in.SpotOptions.AllocationStrategy != ec2types.SpotAllocationStrategyPriceCapacityOptimized || in.OnDemandOptions != nil {
					t.Errorf("spot options %+v, on-demand options %+v", in.SpotOptions, in.OnDemandOptions)
				}
			} else if in.OnDemandOptions == nil || in.OnDemandOptions.AllocationStrategy != ec2types.FleetOnDemandAllocationStrategyLowestPrice || in.SpotOptions != nil {
				t.Errorf("on-demand options %+v, spot options %+v", in.OnDemandOptions, in.SpotOptions)
			}
			if in.TargetCapacitySpecification.DefaultTargetCapacityType != wantDefault {
				t.Errorf("default capacity type %s, want %s", in.TargetCapacitySpecification.DefaultTargetCapacityType, wantDefault)
			}
			var got [][]ec2types.FleetLaunchTemplateOverridesRequest
			for _, cfg := range in.LaunchTemplateConfigs {
				got = append(got, cfg.Overrides)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(ec2types.FleetLaunchTemplateOverridesRequest{})); diff != "" {
				t.Errorf("overrides (-want +got):\n%s", diff)
			}
			if len(byOverride) != len(tc.want[0]) {
				t.Errorf("%d overrides mapped to candidates, want %d", len(byOverride), len(tc.want[0]))
			}
			// Every resource the launch creates carries the tags the
			// controller policies (docs/iam) condition on; the instance,
			// its volumes and the fleet also name the NodeClaim.
			poolTags := map[string]string{"kubernetes.io/cluster/prod": "owned", "eks:eks-cluster-name": "prod", "karpenter.sh/nodepool": "web",
				"karpenter.k8s.aws/ec2nodeclass": "default", "team": "web", "Name": "web-node"}
			claimTags := maps.Clone(poolTags)
			claimTags["karpenter.sh/nodeclaim"] = "web-abcde"
			wantFleet := map[ec2types.ResourceType]map[string]string{ec2types.ResourceTypeInstance: claimTags, ec2types.ResourceTypeVolume: claimTags, ec2types.ResourceTypeFleet: claimTags}
			if diff := cmp.Diff(wantFleet, tagsByType(in.TagSpecifications)); diff != "" {
				t.Errorf("fleet tags (-want +got):\n%s", diff)
			}
			if len(api.created) != 1 {
				t.Fatalf("%d launch templates created, want 1", len(api.created))
			}
			templateTags := maps.Clone(poolTags)
			templateTags[TagLaunchTemplateCluster] = "prod"
			if diff := cmp.Diff(map[ec2types.ResourceType]map[string]string{ec2types.ResourceTypeLaunchTemplate: templateTags}, tagsByType(api.created[0].TagSpecifications)); diff != "" {
				t.Errorf("launch template tags (-want +got):\n%s", diff)
			}
			wantData := map[ec2types.ResourceType]map[string]string{ec2types.ResourceTypeNetworkInterface: poolTags, ec2types.ResourceTypeVolume: poolTags}
			if tc.spot {
				wantData[ec2types.ResourceTypeSpotInstancesRequest] = poolTags
			}
			var dataSpecs []ec2types.TagSpecification
			for _, ts := range api.created[0].LaunchTemplateData.TagSpecifications {
				dataSpecs = append(dataSpecs, ec2types.TagSpecification{ResourceType: ts.ResourceType, Tags: ts.Tags})
			}
			if diff := cmp.Diff(wantData, tagsByType(dataSpecs)); diff != "" {
				t.Errorf("launch template data tags (-want +got):\n%s", diff)
			}
			// 19.5Gi rounds up to 20: EBS sizes are whole GiB.
			data := api.created[0].LaunchTemplateData
			if awssdk.ToString(data.ImageId) != "ami-amd64" || awssdk.ToString(data.IamInstanceProfile.Name) != "nodes" ||
				!cmp.Equal(data.SecurityGroupIds, []string{"sg-1", "sg-2"}) || awssdk.ToInt32(data.BlockDeviceMappings[0].Ebs.VolumeSize) != 20 {
				t.Errorf("launch template image %s, profile %s, groups %v, volume %d GiB", awssdk.ToString(data.ImageId), awssdk.ToString(data.IamInstanceProfile.Name),
					data.SecurityGroupIds, awssdk.ToInt32(data.BlockDeviceMappings[0].Ebs.VolumeSize))
			}
			if md := data.MetadataOptions; md.HttpTokens != "required" || awssdk.ToInt32(md.HttpPutResponseHopLimit) != 1 || md.HttpEndpoint != "enabled" {
				t.Errorf("metadata options %+v, want IMDSv2 required with one hop", md)
			}
			crs := data.CapacityReservationSpecification
			switch {
			case tc.reservation == "" && crs.CapacityReservationPreference != ec2types.CapacityReservationPreferenceNone:
				t.Errorf("a launch outside reservations may use one: %+v", crs)
			case tc.reservation != "" && (crs.CapacityReservationTarget == nil || awssdk.ToString(crs.CapacityReservationTarget.CapacityReservationId) != tc.reservation):
				t.Errorf("a reserved launch targets %+v, want %s", crs.CapacityReservationTarget, tc.reservation)
			}
		})
	}
}

// tagsByType are tag specifications as maps by resource type.
func tagsByType(specs []ec2types.TagSpecification) map[ec2types.ResourceType]map[string]string {
	out := map[ec2types.ResourceType]map[string]string{}
	for _, ts := range specs {
		tags := map[string]string{}
		for _, tag := range ts.Tags {
			tags[awssdk.ToString(tag.Key)] = awssdk.ToString(tag.Value)
		}
		out[ts.ResourceType] = tags
	}
	return out
}
