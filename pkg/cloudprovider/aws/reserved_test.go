package aws

import (
	"context"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
)

var m5large = catalog.InstanceType{Name: "m5.large", Family: "m5", Category: "m", Generation: 5, Size: "large", Architecture: catalog.ArchAMD64, VCPU: 2, MemoryMiB: 8192, MaxPods: 29}.CloudInstanceType("us-west-2")

// The fleet and its launch template per kind of launch: what EC2 needs
// of each (setCapacity, reservationSpecification).
func TestFleetRequestPerReservationKind(t *testing.T) {
	class := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	class.Spec.AMIFamily = ptr.To(awsv1.AMIFamilyCustom)
	class.Status.Subnets = []awsv1.Subnet{{ID: "subnet-a", Zone: "zone-a"}}
	class.Status.AMIs = []awsv1.AMI{{ID: "ami-1", Requirements: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}}
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nc", UID: "uid-1", Labels: map[string]string{v1.NodePoolLabelKey: "np"}}}
	type want struct {
		capacityType  ec2types.DefaultTargetCapacityType
		onDemand      *ec2types.OnDemandOptionsRequest
		spot          *ec2types.SpotOptionsRequest
		reserved      *ec2types.ReservedCapacityOptionsRequest
		preference    ec2types.CapacityReservationPreference
		target        string
		marketType    ec2types.MarketType
		noMarketTypes bool
	}
	lowest := &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice}
	cases := []struct {
		name string
		ct   string
		o    cloudprovider.Offering
		want want
	}{
		{"spot", v1.CapacityTypeSpot, cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeSpot},
			want{capacityType: ec2types.DefaultTargetCapacityTypeSpot, spot: &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized},
				preference: ec2types.CapacityReservationPreferenceNone, noMarketTypes: true}},
		{"on-demand", v1.CapacityTypeOnDemand, cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeOnDemand},
			want{capacityType: ec2types.DefaultTargetCapacityTypeOnDemand, onDemand: lowest, preference: ec2types.CapacityReservationPreferenceNone, noMarketTypes: true}},
		{"a default reservation", v1.CapacityTypeReserved, cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1", ReservationType: v1.ReservationTypeDefault},
			want{capacityType: ec2types.DefaultTargetCapacityTypeOnDemand, onDemand: lowest, preference: ec2types.CapacityReservationPreferenceCapacityReservationsOnly, target: "cr-1", noMarketTypes: true}},
		{"a capacity block", v1.CapacityTypeReserved, cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-2", ReservationType: v1.ReservationTypeCapacityBlock},
			want{capacityType: ec2types.DefaultTargetCapacityTypeCapacityBlock, preference: ec2types.CapacityReservationPreferenceCapacityReservationsOnly, target: "cr-2", marketType: ec2types.MarketTypeCapacityBlock}},
		{"an interruptible reservation", v1.CapacityTypeReserved, cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-3", ReservationInterruptible: true},
			want{capacityType: ec2types.DefaultTargetCapacityTypeReservedCapacity,
				reserved:   &ec2types.ReservedCapacityOptionsRequest{ReservationTypes: []ec2types.FleetReservationType{ec2types.FleetReservationTypeInterruptibleCapacityReservation}},
				preference: ec2types.CapacityReservationPreferenceCapacityReservationsOnly, target: "cr-3", marketType: ec2types.MarketTypeInterruptibleCapacityReservation}},
	}
	ignore := cmpopts.IgnoreUnexported(ec2types.OnDemandOptionsRequest{}, ec2types.SpotOptionsRequest{}, ec2types.ReservedCapacityOptionsRequest{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := &templates{}
			p, err := New(api, Options{Region: "us-west-2", ClusterName: "prod", Clock: clocktesting.NewFakeClock(time.Now()), NodeClasses: noClasses{},
				Cluster: KnownCluster{Endpoint: "https://prod.eks.test", CABundle: "Q0E=", ServiceCIDR: "172.20.0.0/16"}})
			if err != nil {
				t.Fatal(err)
			}
			o := tc.o
			in, _, _, err := p.fleet(context.Background(), nc, class, tc.ct, []cloudprovider.LaunchCandidate{{InstanceType: m5large, Offering: &o}})
			if err != nil {
				t.Fatal(err)
			}
			if got := in.TargetCapacitySpecification.DefaultTargetCapacityType; got != tc.want.capacityType {
				t.Errorf("DefaultTargetCapacityType %s, want %s", got, tc.want.capacityType)
			}
			if diff := cmp.Diff(tc.want.onDemand, in.OnDemandOptions, ignore); diff != "" {
				t.Errorf("OnDemandOptions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.spot, in.SpotOptions, ignore); diff != "" {
				t.Errorf("SpotOptions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.reserved, in.ReservedCapacityOptions, ignore); diff != "" {
				t.Errorf("ReservedCapacityOptions (-want +got):\n%s", diff)
			}
			if len(api.created) != 1 {
				t.Fatalf("%d launch templates, want 1", len(api.created))
			}
			data := api.created[0].LaunchTemplateData
			crs := data.CapacityReservationSpecification
			target := ""
			if crs.CapacityReservationTarget != nil {
				target = awssdk.ToString(crs.CapacityReservationTarget.CapacityReservationId)
			}
			if crs.CapacityReservationPreference != tc.want.preference || target != tc.want.target {
				t.Errorf("reservation preference %s target %q, want %s %q", crs.CapacityReservationPreference, target, tc.want.preference, tc.want.target)
			}
			switch {
			case tc.want.noMarketTypes && data.InstanceMarketOptions != nil:
				t.Errorf("market options %+v, want none", data.InstanceMarketOptions)
			case !tc.want.noMarketTypes && (data.InstanceMarketOptions == nil || data.InstanceMarketOptions.MarketType != tc.want.marketType):
				t.Errorf("market options %+v, want market type %s", data.InstanceMarketOptions, tc.want.marketType)
			}
			if got := data.MetadataOptions.InstanceMetadataTags; got != ec2types.LaunchTemplateInstanceMetadataTagsStateDisabled {
				t.Errorf("InstanceMetadataTags %q, want disabled", got)
			}
		})
	}
}

// One CreateFleet takes one kind of reservation and one capacity block
// at most.
func TestOneFleetOfReservations(t *testing.T) {
	offer := func(id, kind string, interruptible bool, price float64) cloudprovider.LaunchCandidate {
		return cloudprovider.LaunchCandidate{InstanceType: m5large, Offering: &cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeReserved,
			ReservationID: id, ReservationType: kind, ReservationInterruptible: interruptible, Price: price}}
	}
	ids := func(cands []cloudprovider.LaunchCandidate) []string {
		var out []string
		for _, c := range cands {
			out = append(out, c.Offering.ReservationID)
		}
		return out
	}
	cases := []struct {
		name  string
		cands []cloudprovider.LaunchCandidate
		want  []string
	}{
		{"none", nil, nil},
		{"default reservations together", []cloudprovider.LaunchCandidate{offer("cr-1", "default", false, 1), offer("cr-2", "default", false, 2)}, []string{"cr-1", "cr-2"}},
		{"the cheapest kind wins", []cloudprovider.LaunchCandidate{offer("cr-b1", "capacity-block", false, 1), offer("cr-1", "default", false, 2)}, []string{"cr-b1"}},
		{"one capacity block only", []cloudprovider.LaunchCandidate{offer("cr-b1", "capacity-block", false, 1), offer("cr-b2", "capacity-block", false, 2)}, []string{"cr-b1"}},
		{"at equal prices, default before capacity block before interruptible",
			[]cloudprovider.LaunchCandidate{offer("cr-i", "default", true, 1), offer("cr-b", "capacity-block", false, 1), offer("cr-d", "default", false, 1)}, []string{"cr-d"}},
		{"at equal prices, capacity block before interruptible",
			[]cloudprovider.LaunchCandidate{offer("cr-i", "default", true, 1), offer("cr-b", "capacity-block", false, 1)}, []string{"cr-b"}},
		{"interruptible ones together", []cloudprovider.LaunchCandidate{offer("cr-i1", "default", true, 1), offer("cr-d", "default", false, 2), offer("cr-i2", "default", true, 3)}, []string{"cr-i1", "cr-i2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ids(oneFleetOfReservations(tc.cands))); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
		})
	}
}

// The candidate a fleet instance was launched as, whether or not the
// answer has SubnetId.
func TestLaunchedAs(t *testing.T) {
	a := cloudprovider.LaunchCandidate{InstanceType: m5large, Offering: &cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeOnDemand}}
	b := cloudprovider.LaunchCandidate{InstanceType: m5large, Offering: &cloudprovider.Offering{Zone: "zone-b", CapacityType: v1.CapacityTypeOnDemand}}
	byOverride := map[string]cloudprovider.LaunchCandidate{overrideKey("m5.large", "subnet-a"): a, overrideKey("m5.large", "subnet-b"): b}
	echo := func(subnet, zone string) *ec2types.LaunchTemplateAndOverridesResponse {
		return &ec2types.LaunchTemplateAndOverridesResponse{Overrides: &ec2types.FleetLaunchTemplateOverrides{InstanceType: "m5.large", SubnetId: ptrOrNil(subnet), AvailabilityZone: ptrOrNil(zone)}}
	}
	cases := []struct {
		name string
		inst ec2types.CreateFleetInstance
		want string // the candidate's zone; "" for none
	}{
		{"by the answer's subnet", ec2types.CreateFleetInstance{InstanceType: "m5.large", SubnetId: awssdk.String("subnet-b"), LaunchTemplateAndOverrides: echo("subnet-b", "zone-b")}, "zone-b"},
		{"no SubnetId: the echoed override's subnet", ec2types.CreateFleetInstance{InstanceType: "m5.large", LaunchTemplateAndOverrides: echo("subnet-b", "")}, "zone-b"},
		{"no subnet at all: the echoed override's zone", ec2types.CreateFleetInstance{InstanceType: "m5.large", LaunchTemplateAndOverrides: echo("", "zone-a")}, "zone-a"},
		{"nothing echoed: the answer's zone", ec2types.CreateFleetInstance{InstanceType: "m5.large", AvailabilityZone: awssdk.String("zone-b")}, "zone-b"},
		{"a subnet not asked for", ec2types.CreateFleetInstance{InstanceType: "m5.large", SubnetId: awssdk.String("subnet-x")}, ""},
		{"a type not asked for", ec2types.CreateFleetInstance{InstanceType: "c5.large", LaunchTemplateAndOverrides: echo("", "zone-a")}, ""},
		{"nothing to go by", ec2types.CreateFleetInstance{InstanceType: "m5.large"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := launchedAs(tc.inst, byOverride)
			zone := ""
			if ok {
				zone = got.Offering.Zone
			}
			if zone != tc.want {
				t.Errorf("launched as the candidate in %q, want %q", zone, tc.want)
			}
		})
	}
}

func ptrOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// unexpected records the instances terminated.
type unexpected struct {
	templates
	terminated []string
}

func (f *unexpected) TerminateInstances(_ context.Context, in *ec2.TerminateInstancesInput, _ ...func(*ec2.Options)) (*ec2.TerminateInstancesOutput, error) {
	f.terminated = append(f.terminated, in.InstanceIds...)
	return &ec2.TerminateInstancesOutput{}, nil
}

// An instance Capstan cannot tell it asked for is terminated, not leaked.
func TestUnexpectedFleetResultTerminates(t *testing.T) {
	api := &unexpected{}
	p, err := New(api, Options{Region: "us-west-2", ClusterName: "prod", Clock: clocktesting.NewFakeClock(time.Now()), NodeClasses: noClasses{},
		Cluster: KnownCluster{Endpoint: "https://prod.eks.test", CABundle: "Q0E=", ServiceCIDR: "172.20.0.0/16"}})
	if err != nil {
		t.Fatal(err)
	}
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nc"}}
	err = p.unexpectedFleetResult(context.Background(), nc, ec2types.CreateFleetInstance{InstanceIds: []string{"i-1"}, InstanceType: "m5.large", SubnetId: awssdk.String("subnet-x")})
	if ce, ok := cloudprovider.AsCreateError(err); !ok || ce.Reason != "UnexpectedFleetResult" {
		t.Errorf("error %v, want a CreateError UnexpectedFleetResult", err)
	}
	if diff := cmp.Diff([]string{"i-1"}, api.terminated); diff != "" {
		t.Errorf("terminated (-want +got):\n%s", diff)
	}
}
