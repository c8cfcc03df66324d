package aws

import (
	"errors"
	"strings"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestFleetErrors(t *testing.T) {
	it := test.InstanceType(test.InstanceTypeOptions{Name: "m5.large", CPU: 2, Memory: 8})
	spotA := cloudprovider.LaunchCandidate{InstanceType: it, Offering: &cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeSpot}}
	reservedA := cloudprovider.LaunchCandidate{InstanceType: it, Offering: &cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1"}}
	byOverride := map[string]cloudprovider.LaunchCandidate{"m5.large/subnet-a": spotA, "m5.large/subnet-r": reservedA}
	fleetErr := func(code, subnet string) ec2types.CreateFleetError {
		return ec2types.CreateFleetError{ErrorCode: awssdk.String(code), ErrorMessage: awssdk.String("no"), LaunchTemplateAndOverrides: &ec2types.LaunchTemplateAndOverridesResponse{
			Overrides: &ec2types.FleetLaunchTemplateOverrides{InstanceType: "m5.large", SubnetId: awssdk.String(subnet)},
		}}
	}
	nc := &v1.NodeClaim{}
	nc.Name = "nc"
	spotKey := cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "m5.large", Zone: "zone-a"}
	reservedKey := cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeReserved, InstanceType: "m5.large", Zone: "zone-a", ReservationID: "cr-1"}
	cases := []struct {
		name string
		errs []ec2types.CreateFleetError
		// ice are the marks, whether the error is an insufficient-capacity
		// one or a refusal carrying them; wide the capacity types.
		ice  map[cloudprovider.OfferingKey]string
		wide []string
		// reason and code are a refusal's; message is in its text.
		reason, code, message string
	}{
		{"capacity per offering", []ec2types.CreateFleetError{fleetErr("InsufficientInstanceCapacity", "subnet-a"), fleetErr("ReservationCapacityExceeded", "subnet-r")},
			map[cloudprovider.OfferingKey]string{spotKey: "InsufficientInstanceCapacity", reservedKey: "ReservationCapacityExceeded"}, nil, "", "", ""},
		{"the account's spot limit marks spot everywhere", []ec2types.CreateFleetError{fleetErr("MaxSpotInstanceCountExceeded", "subnet-a")},
			map[cloudprovider.OfferingKey]string{spotKey: "MaxSpotInstanceCountExceeded"}, []string{v1.CapacityTypeSpot}, "", "", ""},
		// A max price below the spot price (the class's annotation, docs/aws.md
		// "Spot max price") fails that offering only.
		{"a max price too low marks the offering", []ec2types.CreateFleetError{fleetErr("SpotMaxPriceTooLow", "subnet-a")},
			map[cloudprovider.OfferingKey]string{spotKey: "SpotMaxPriceTooLow"}, nil, "", "", ""},
		{"the spot service-linked role marks spot everywhere", []ec2types.CreateFleetError{fleetErr("AuthFailure.ServiceLinkedRoleCreationNotPermitted", "subnet-a")},
			map[cloudprovider.OfferingKey]string{spotKey: "AuthFailure.ServiceLinkedRoleCreationNotPermitted"}, []string{v1.CapacityTypeSpot}, "", "", ""},
		{"a refusal is a launch failure with its code", []ec2types.CreateFleetError{fleetErr("InvalidLaunchTemplateId.NotFound", "subnet-a")}, nil, nil,
			"InvalidLaunchTemplateIdNotFound", "InvalidLaunchTemplateId.NotFound", "InvalidLaunchTemplateId.NotFound: no"},
		{"a refusal beside a capacity error keeps its mark", []ec2types.CreateFleetError{fleetErr("ReservationCapacityExceeded", "subnet-r"), fleetErr("UnauthorizedOperation", "subnet-a")},
			map[cloudprovider.OfferingKey]string{reservedKey: "ReservationCapacityExceeded"}, nil, "UnauthorizedOperation", "UnauthorizedOperation", "UnauthorizedOperation: no"},
		{"an override not asked for", []ec2types.CreateFleetError{fleetErr("InsufficientInstanceCapacity", "subnet-x")}, nil, nil,
			"UnexpectedFleetResult", "UnexpectedFleetResult", "InsufficientInstanceCapacity: no (on override m5.large/subnet-x, which was not asked for)"},
		{"nothing launched, nothing said", nil, nil, nil, "CreateFleetFailed", "", "reported no error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := fleetErrors(nc, tc.errs, byOverride)
			ice, isICE := errors.AsType[*cloudprovider.InsufficientCapacityError](err)
			if tc.reason != "" {
				ce, ok := cloudprovider.AsCreateError(err)
				if !ok || isICE || ce.Reason != tc.reason || ce.Code != tc.code || !strings.Contains(err.Error(), tc.message) {
					t.Fatalf("error %v, want a CreateError %s (code %q) saying %q", err, tc.reason, tc.code, tc.message)
				}
				ice = ce.Unavailable
			} else if !isICE {
				t.Fatalf("error %v, want an InsufficientCapacityError", err)
			}
			var reasons map[cloudprovider.OfferingKey]string
			var wide []string
			if ice != nil {
				reasons, wide = ice.Reasons, ice.CapacityTypeWide
			}
			if diff := cmp.Diff(tc.ice, reasons, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wide, wide); diff != "" {
				t.Errorf("capacity-type wide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseProviderID(t *testing.T) {
	cases := []struct {
		id, want string
		err      bool
	}{
		{"aws:///us-west-2a/i-0123456789abcdef0", "i-0123456789abcdef0", false},
		{"aws:///us-west-2a/", "", true},
		{"sim://us-west-2a/i-01", "", true},
		{"aws:///us-west-2a/vol-1", "", true},
		{"", "", true},
	}
	for _, tc := range cases {
		got, err := parseProviderID(tc.id)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("parseProviderID(%q) = %q, %v; want %q, error %t", tc.id, got, err, tc.want, tc.err)
		}
		if !tc.err && providerID("us-west-2a", got) != tc.id {
			t.Errorf("providerID does not invert parseProviderID for %q", tc.id)
		}
	}
}

func TestCapacityTypeOf(t *testing.T) {
	cases := []struct {
		name string
		inst ec2types.Instance
		want string
	}{
		{"spot", ec2types.Instance{InstanceLifecycle: ec2types.InstanceLifecycleTypeSpot}, v1.CapacityTypeSpot},
		{"in a reservation", ec2types.Instance{CapacityReservationId: awssdk.String("cr-1")}, v1.CapacityTypeReserved},
		{"on-demand", ec2types.Instance{}, v1.CapacityTypeOnDemand},
	}
	for _, tc := range cases {
		if got := capacityTypeOf(tc.inst); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// A CPU type gets the standard image, a GPU type the Nvidia one, whatever
// their order in the status.
func TestAMIFor(t *testing.T) {
	class := &awsv1.EC2NodeClass{}
	class.Status.AMIs = []awsv1.AMI{
		{ID: "ami-nvidia", Requirements: []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
			{Key: v1.LabelInstanceGPUCount, Operator: corev1.NodeSelectorOpExists},
		}},
		{ID: "ami-standard", Requirements: []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
			{Key: v1.LabelInstanceGPUCount, Operator: corev1.NodeSelectorOpDoesNotExist},
		}},
		{ID: "ami-arm", Requirements: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}},
	}
	cases := []struct {
		name string
		it   catalog.InstanceType
		want string
	}{
		{"a CPU type", catalog.InstanceType{Name: "m5.large", Family: "m5", Category: "m", Generation: 5, Size: "large", Architecture: catalog.ArchAMD64, VCPU: 2, MemoryMiB: 8192, MaxPods: 29}, "ami-standard"},
		{"a GPU type", catalog.InstanceType{Name: "g5.xlarge", Family: "g5", Category: "g", Generation: 5, Size: "xlarge", Architecture: catalog.ArchAMD64, VCPU: 4, MemoryMiB: 16384, MaxPods: 58,
			GPUName: "a10g", GPUManufacturer: "nvidia", GPUCount: 1, GPUMemoryMiB: 24576}, "ami-nvidia"},
		{"an arm type", catalog.InstanceType{Name: "m6g.large", Family: "m6g", Category: "m", Generation: 6, Size: "large", Architecture: catalog.ArchARM64, VCPU: 2, MemoryMiB: 8192, MaxPods: 29}, "ami-arm"},
	}
	for _, tc := range cases {
		got, ok := amiFor(class, tc.it.CloudInstanceType("us-west-2"))
		if !ok || got != tc.want {
			t.Errorf("%s: %q (%t), want %q", tc.name, got, ok, tc.want)
		}
	}
}
