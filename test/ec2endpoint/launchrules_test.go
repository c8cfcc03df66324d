package ec2endpoint_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// withReservationKinds adds a capacity block and an interruptible
// reservation for m5.large in us-west-2a.
func withReservationKinds(spec *simv1alpha1.CloudProfileSpec) {
	spec.Reservations = append(spec.Reservations,
		simv1alpha1.Reservation{ID: "cr-block", InstanceType: "m5.large", Zone: "us-west-2a", Count: 1, Type: simv1alpha1.ReservationTypeTargeted,
			OwnerID: "111122223333", CapacityBlock: true, EndTime: &metav1.Duration{Duration: 10 * time.Hour}},
		simv1alpha1.Reservation{ID: "cr-interruptible", InstanceType: "m5.large", Zone: "us-west-2a", Count: 1, Type: simv1alpha1.ReservationTypeTargeted,
			OwnerID: "111122223333", Interruptible: true},
	)
}

func market(mt ec2types.MarketType) func(*ec2types.RequestLaunchTemplateData) {
	return func(d *ec2types.RequestLaunchTemplateData) {
		d.InstanceMarketOptions = &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: mt}
	}
}

func both(mods ...func(*ec2types.RequestLaunchTemplateData)) func(*ec2types.RequestLaunchTemplateData) {
	return func(d *ec2types.RequestLaunchTemplateData) {
		for _, m := range mods {
			m(d)
		}
	}
}

// reservedCapacity makes a fleet reserved-capacity with the
// interruptible reservation type, as the AWS provider asks for one.
func reservedCapacity(in *ec2.CreateFleetInput) {
	in.TargetCapacitySpecification.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeReservedCapacity
	in.OnDemandOptions = nil
	in.ReservedCapacityOptions = &ec2types.ReservedCapacityOptionsRequest{ReservationTypes: []ec2types.FleetReservationType{ec2types.FleetReservationTypeInterruptibleCapacityReservation}}
}

func capacityBlock(in *ec2.CreateFleetInput) {
	in.TargetCapacitySpecification.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeCapacityBlock
	in.OnDemandOptions = nil
}

// Each launch into a capacity block or an interruptible reservation
// without the purchase options it needs is refused as EC2 refuses it;
// with them it launches, with the instance's lifecycle saying which.
func TestFleetReservationMarketTypes(t *testing.T) {
	const refused = "m5.large/us-west-2a/on-demand: InvalidParameterValue"
	for _, tc := range []struct {
		name     string
		template func(*ec2types.RequestLaunchTemplateData)
		fleet    func(*ec2.CreateFleetInput)
		want     outcome
		lifecyle ec2types.InstanceLifecycleType
	}{
		{"a capacity block as capacity-block", both(target("cr-block"), market(ec2types.MarketTypeCapacityBlock)), capacityBlock,
			outcome{Launched: "m5.large/" + subnetA + "/on-demand"}, ec2types.InstanceLifecycleTypeCapacityBlock},
		{"a capacity block without its market type", target("cr-block"), capacityBlock, outcome{Errors: []string{refused}}, ""},
		{"a capacity block in an on-demand fleet", both(target("cr-block"), market(ec2types.MarketTypeCapacityBlock)), func(*ec2.CreateFleetInput) {},
			outcome{Errors: []string{refused}}, ""},
		{"an interruptible reservation with its options", both(target("cr-interruptible"), market(ec2types.MarketTypeInterruptibleCapacityReservation)), reservedCapacity,
			outcome{Launched: "m5.large/" + subnetA + "/on-demand"}, ec2types.InstanceLifecycleTypeInterruptibleCapacityReservation},
		{"an interruptible reservation without its market type", target("cr-interruptible"), reservedCapacity, outcome{Errors: []string{refused}}, ""},
		{"an interruptible reservation in an on-demand fleet", both(target("cr-interruptible"), market(ec2types.MarketTypeInterruptibleCapacityReservation)), func(*ec2.CreateFleetInput) {},
			outcome{Errors: []string{refused}}, ""},
		{"an interruptible reservation without the reservation type", both(target("cr-interruptible"), market(ec2types.MarketTypeInterruptibleCapacityReservation)),
			func(in *ec2.CreateFleetInput) {
				reservedCapacity(in)
				in.ReservedCapacityOptions.ReservationTypes = nil
			}, outcome{Errors: []string{refused}}, ""},
		{"a capacity-block market type into a default reservation", both(target("cr-small"), market(ec2types.MarketTypeCapacityBlock)), func(*ec2.CreateFleetInput) {},
			outcome{Errors: []string{refused}}, ""},
		{"a default reservation on-demand", target("cr-small"), func(*ec2.CreateFleetInput) {}, outcome{Launched: "m5.large/" + subnetA + "/on-demand"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, profile(withReservationKinds))
			in := fleetInput(createTemplate(t, f, "template", tc.template), v1.CapacityTypeOnDemand, override("m5.large", subnetA))
			tc.fleet(in)
			out := launch(t, f, in)
			if diff := cmp.Diff(tc.want, outcomeOf(out)); diff != "" {
				t.Fatalf("outcome (-want +got):\n%s", diff)
			}
			for _, e := range out.Errors {
				if msg := aws.ToString(e.ErrorMessage); !strings.Contains(msg, "market type (purchasing) option is not valid") {
					t.Errorf("message %q", msg)
				}
			}
			if len(out.Instances) == 0 {
				return
			}
			desc, err := f.client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: out.Instances[0].InstanceIds})
			if err != nil {
				t.Fatal(err)
			}
			if got := desc.Reservations[0].Instances[0].InstanceLifecycle; got != tc.lifecyle {
				t.Errorf("lifecycle %q, want %q", got, tc.lifecyle)
			}
		})
	}
}

// Requests EC2 refuses whole for their capacity options.
func TestFleetCapacityOptionErrors(t *testing.T) {
	f := newFixture(t, profile(withReservationKinds))
	block := createTemplate(t, f, "block", both(target("cr-block"), market(ec2types.MarketTypeCapacityBlock)))
	for _, tc := range []struct {
		name string
		mod  func(*ec2.CreateFleetInput)
	}{
		{"ReservedCapacityOptions on an on-demand fleet", func(in *ec2.CreateFleetInput) {
			in.ReservedCapacityOptions = &ec2types.ReservedCapacityOptionsRequest{ReservationTypes: []ec2types.FleetReservationType{ec2types.FleetReservationTypeInterruptibleCapacityReservation}}
		}},
		{"CapacityReservationOptions on a capacity-block fleet", func(in *ec2.CreateFleetInput) {
			capacityBlock(in)
			in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{CapacityReservationOptions: &ec2types.CapacityReservationOptionsRequest{UsageStrategy: ec2types.FleetCapacityReservationUsageStrategyUseCapacityReservationsFirst}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := fleetInput(block, v1.CapacityTypeOnDemand, override("m5.large", subnetA))
			tc.mod(in)
			_, err := f.client.CreateFleet(context.Background(), in)
			if got := apiCode(t, err); got != "InvalidParameterCombination" {
				t.Errorf("code %q (%v), want InvalidParameterCombination", got, err)
			}
		})
	}
}

func metadataTags(state ec2types.LaunchTemplateInstanceMetadataTagsState) func(*ec2types.RequestLaunchTemplateData) {
	return func(d *ec2types.RequestLaunchTemplateData) {
		d.MetadataOptions = &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{InstanceMetadataTags: state}
	}
}

// With tags in instance metadata (the template's or the account's
// default), a tag key with "/" is refused; disabled in the template, it
// is not.
func TestFleetInstanceMetadataTags(t *testing.T) {
	const refused = "m5.large/us-west-2a/on-demand: InvalidParameterValue"
	for _, tc := range []struct {
		name           string
		accountDefault bool
		template       func(*ec2types.RequestLaunchTemplateData)
		want           outcome
	}{
		{"account default on, template silent", true, nil, outcome{Errors: []string{refused}}},
		{"account default on, template disables", true, metadataTags(ec2types.LaunchTemplateInstanceMetadataTagsStateDisabled), outcome{Launched: "m5.large/" + subnetA + "/on-demand"}},
		{"account default off, template enables", false, metadataTags(ec2types.LaunchTemplateInstanceMetadataTagsStateEnabled), outcome{Errors: []string{refused}}},
		{"account default off, template silent", false, nil, outcome{Launched: "m5.large/" + subnetA + "/on-demand"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, profile(), func(o *ec2endpoint.Options) { o.InstanceMetadataTags = tc.accountDefault })
			out := launch(t, f, fleetInput(createTemplate(t, f, "template", tc.template), v1.CapacityTypeOnDemand, override("m5.large", subnetA)))
			if diff := cmp.Diff(tc.want, outcomeOf(out)); diff != "" {
				t.Fatalf("outcome (-want +got):\n%s", diff)
			}
			for _, e := range out.Errors {
				if msg := aws.ToString(e.ErrorMessage); !strings.HasPrefix(msg, "'karpenter.sh/nodeclaim' is not a valid tag key.") {
					t.Errorf("message %q", msg)
				}
			}
		})
	}
}

// A template's MetadataOptions take only the values EC2 allows.
func TestLaunchTemplateMetadataOptions(t *testing.T) {
	f := newFixture(t, profile())
	for i, md := range []*ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
		{InstanceMetadataTags: "maybe"}, {HttpTokens: "always"}, {HttpPutResponseHopLimit: aws.Int32(65)},
	} {
		_, err := f.client.CreateLaunchTemplate(context.Background(), &ec2.CreateLaunchTemplateInput{
			LaunchTemplateName: aws.String("lt-" + string(rune('a'+i))),
			LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amiX86), MetadataOptions: md},
		})
		if got := apiCode(t, err); got != "InvalidParameterValue" {
			t.Errorf("metadata options %+v: code %q, want InvalidParameterValue", md, got)
		}
	}
}

// An endpoint answering as EC2 did before fleet instances carried their
// placement leaves SubnetId and the zone out.
func TestFleetWithoutInstancePlacement(t *testing.T) {
	f := newFixture(t, profile(), func(o *ec2endpoint.Options) { o.OmitFleetInstancePlacement = true })
	out := launch(t, f, fleetInput(createTemplate(t, f, "template", nil), v1.CapacityTypeOnDemand, override("m5.large", subnetB)))
	if len(out.Instances) != 1 {
		t.Fatalf("instances %+v", out.Instances)
	}
	inst := out.Instances[0]
	if inst.SubnetId != nil || inst.AvailabilityZone != nil || inst.AvailabilityZoneId != nil {
		t.Errorf("subnet %v, zone %v, zone id %v; want none", inst.SubnetId, inst.AvailabilityZone, inst.AvailabilityZoneId)
	}
	if got := aws.ToString(inst.LaunchTemplateAndOverrides.Overrides.SubnetId); got != subnetB {
		t.Errorf("echoed subnet %q, want %s", got, subnetB)
	}
}
