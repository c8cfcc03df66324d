package ec2endpoint_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// Subnets of the test profile's zones.
const (
	subnetA = "subnet-00000000000000001"
	subnetB = "subnet-00000000000000002"
)

func override(instanceType, subnet string) ec2types.FleetLaunchTemplateOverridesRequest {
	zone := map[string]string{subnetA: "us-west-2a", subnetB: "us-west-2b"}[subnet]
	return ec2types.FleetLaunchTemplateOverridesRequest{InstanceType: ec2types.InstanceType(instanceType), SubnetId: aws.String(subnet), AvailabilityZone: aws.String(zone)}
}

// fleetInput is an instant fleet of one instance as a Karpenter-style
// provider asks for it: spot price-capacity-optimized, or on-demand
// lowest-price, tagged with its NodeClaim.
func fleetInput(template, capacityType string, overrides ...ec2types.FleetLaunchTemplateOverridesRequest) *ec2.CreateFleetInput {
	tags := []ec2types.Tag{{Key: aws.String("karpenter.sh/nodeclaim"), Value: aws.String("default-abcde")}, {Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("default")}}
	in := &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
			DefaultTargetCapacityType: ec2types.DefaultTargetCapacityType(capacityType), TotalTargetCapacity: aws.Int32(1),
		},
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String(template), Version: aws.String("$Latest")},
			Overrides:                   slices.Clone(overrides),
		}},
		TagSpecifications: []ec2types.TagSpecification{
			{ResourceType: ec2types.ResourceTypeInstance, Tags: tags}, {ResourceType: ec2types.ResourceTypeVolume, Tags: tags}, {ResourceType: ec2types.ResourceTypeFleet, Tags: tags},
		},
	}
	if capacityType == v1.CapacityTypeSpot {
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized}
	} else {
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice}
	}
	return in
}

func launch(t *testing.T, f *fixture, in *ec2.CreateFleetInput) *ec2.CreateFleetOutput {
	t.Helper()
	out, err := f.client.CreateFleet(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// outcome is what a fleet did: where its instance went and the errors.
type outcome struct {
	Launched string // type/subnet/lifecycle
	Errors   []string
}

func outcomeOf(out *ec2.CreateFleetOutput) outcome {
	var o outcome
	for _, inst := range out.Instances {
		o.Launched = string(inst.InstanceType) + "/" + aws.ToString(inst.SubnetId) + "/" + string(inst.Lifecycle)
	}
	for _, e := range out.Errors {
		ov := e.LaunchTemplateAndOverrides.Overrides
		o.Errors = append(o.Errors, string(ov.InstanceType)+"/"+aws.ToString(ov.AvailabilityZone)+"/"+string(e.Lifecycle)+": "+aws.ToString(e.ErrorCode))
	}
	return o
}

// spotPrices make m5.large cheapest in us-west-2b, then c5.large.
func spotPrices(s *simv1alpha1.CloudProfileSpec) {
	s.SpotPrices = []simv1alpha1.SpotPrice{
		{InstanceType: "m5.large", Zone: "us-west-2a", Price: "0.05"}, {InstanceType: "m5.large", Zone: "us-west-2b", Price: "0.03"},
		{InstanceType: "c5.large", Zone: "*", Price: "0.04"},
	}
}

func pool(instanceType, zone, capacityType string) simv1alpha1.CapacityPool {
	return simv1alpha1.CapacityPool{InstanceType: instanceType, Zone: zone, CapacityType: capacityType, Count: 0}
}

func TestFleetSpot(t *testing.T) {
	overrides := []ec2types.FleetLaunchTemplateOverridesRequest{
		override("m5.large", subnetA), override("m5.large", subnetB), override("c5.large", subnetA), override("c5.large", subnetB),
	}
	for _, tc := range []struct {
		name  string
		pools []simv1alpha1.CapacityPool
		mod   func(*ec2.CreateFleetInput)
		want  outcome
	}{
		{name: "the cheapest pool", want: outcome{Launched: "m5.large/" + subnetB + "/spot"}},
		{name: "an empty pool is passed over", pools: []simv1alpha1.CapacityPool{pool("m5.large", "us-west-2b", v1.CapacityTypeSpot)},
			want: outcome{Launched: "c5.large/" + subnetA + "/spot", Errors: []string{"m5.large/us-west-2b/spot: InsufficientInstanceCapacity"}}},
		{name: "price-capacity-optimized prefers the deeper of equal prices",
			pools: []simv1alpha1.CapacityPool{pool("m5.large", "us-west-2b", v1.CapacityTypeSpot), {InstanceType: "c5.large", Zone: "us-west-2a", CapacityType: v1.CapacityTypeSpot, Count: 3}},
			want:  outcome{Launched: "c5.large/" + subnetB + "/spot", Errors: []string{"m5.large/us-west-2b/spot: InsufficientInstanceCapacity"}}},
		{name: "every pool empty", pools: []simv1alpha1.CapacityPool{
			pool("m5.large", "us-west-2a", v1.CapacityTypeSpot), pool("m5.large", "us-west-2b", v1.CapacityTypeSpot),
			pool("c5.large", "us-west-2a", v1.CapacityTypeSpot), pool("c5.large", "us-west-2b", v1.CapacityTypeSpot),
		}, want: outcome{Errors: []string{
			"m5.large/us-west-2b/spot: InsufficientInstanceCapacity", "c5.large/us-west-2a/spot: InsufficientInstanceCapacity",
			"c5.large/us-west-2b/spot: InsufficientInstanceCapacity", "m5.large/us-west-2a/spot: InsufficientInstanceCapacity",
		}}},
		{name: "max price below the spot price", mod: func(in *ec2.CreateFleetInput) {
			in.LaunchTemplateConfigs[0].Overrides[1].MaxPrice = aws.String("0.01")
		}, want: outcome{Launched: "c5.large/" + subnetA + "/spot", Errors: []string{"m5.large/us-west-2b/spot: SpotMaxPriceTooLow"}}},
		{name: "lowest-price", mod: func(in *ec2.CreateFleetInput) {
			in.SpotOptions.AllocationStrategy = ec2types.SpotAllocationStrategyLowestPrice
		}, want: outcome{Launched: "m5.large/" + subnetB + "/spot"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, profile(spotPrices, func(s *simv1alpha1.CloudProfileSpec) { s.Capacity = tc.pools }))
			lt := createTemplate(t, f, "spot", nil)
			in := fleetInput(lt, v1.CapacityTypeSpot, overrides...)
			if tc.mod != nil {
				tc.mod(in)
			}
			if diff := cmp.Diff(tc.want, outcomeOf(launch(t, f, in))); diff != "" {
				t.Errorf("fleet (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFleetSpotLimit(t *testing.T) {
	f := newFixture(t, profile(func(s *simv1alpha1.CloudProfileSpec) { s.MaxSpotInstances = 1 }))
	lt := createTemplate(t, f, "spot", nil)
	launch(t, f, fleetInput(lt, v1.CapacityTypeSpot, override("m5.large", subnetA)))
	// A new input: the SDK writes the client token it makes up into the
	// one it is given, and the same token gets the same fleet back.
	got := outcomeOf(launch(t, f, fleetInput(lt, v1.CapacityTypeSpot, override("m5.large", subnetA))))
	if diff := cmp.Diff(outcome{Errors: []string{"m5.large/us-west-2a/spot: MaxSpotInstanceCountExceeded"}}, got); diff != "" {
		t.Errorf("second spot instance (-want +got):\n%s", diff)
	}
}

func TestFleetOnDemand(t *testing.T) {
	for _, tc := range []struct {
		name     string
		template func(*ec2types.RequestLaunchTemplateData)
		mod      func(*ec2.CreateFleetInput)
		want     string // type/subnet/reservation
	}{
		{name: "lowest price", template: preference(ec2types.CapacityReservationPreferenceNone), want: "c5.large/" + subnetB + "/"},
		{name: "prioritized", template: preference(ec2types.CapacityReservationPreferenceNone), mod: func(in *ec2.CreateFleetInput) {
			in.OnDemandOptions.AllocationStrategy = ec2types.FleetOnDemandAllocationStrategyPrioritized
			in.LaunchTemplateConfigs[0].Overrides[0].Priority = aws.Float64(2)
			in.LaunchTemplateConfigs[0].Overrides[1].Priority = aws.Float64(1)
		}, want: "m5.xlarge/" + subnetB + "/"},
		// EC2's default preference is open: a launch that an open
		// reservation matches lands in it.
		{name: "open reservation", mod: func(in *ec2.CreateFleetInput) {
			in.LaunchTemplateConfigs[0].Overrides = in.LaunchTemplateConfigs[0].Overrides[1:]
		}, want: "m5.xlarge/" + subnetB + "/cr-open"},
		{name: "open preference, cheaper type", want: "c5.large/" + subnetB + "/"},
		{name: "reservations first", mod: func(in *ec2.CreateFleetInput) {
			in.OnDemandOptions.CapacityReservationOptions = &ec2types.CapacityReservationOptionsRequest{UsageStrategy: ec2types.FleetCapacityReservationUsageStrategyUseCapacityReservationsFirst}
		}, want: "m5.xlarge/" + subnetB + "/cr-open"},
		{name: "reservations only", template: preference(ec2types.CapacityReservationPreferenceCapacityReservationsOnly), want: "m5.xlarge/" + subnetB + "/cr-open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, profile())
			lt := createTemplate(t, f, "on-demand", tc.template)
			in := fleetInput(lt, v1.CapacityTypeOnDemand, override("c5.large", subnetB), override("m5.xlarge", subnetB))
			if tc.mod != nil {
				tc.mod(in)
			}
			out := launch(t, f, in)
			if len(out.Instances) != 1 || out.Instances[0].Lifecycle != ec2types.InstanceLifecycleOnDemand {
				t.Fatalf("fleet %+v", outcomeOf(out))
			}
			desc, err := f.client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: out.Instances[0].InstanceIds})
			if err != nil {
				t.Fatal(err)
			}
			inst := desc.Reservations[0].Instances[0]
			if got := string(inst.InstanceType) + "/" + *inst.SubnetId + "/" + aws.ToString(inst.CapacityReservationId); got != tc.want {
				t.Errorf("launched %s, want %s", got, tc.want)
			}
		})
	}
}

func preference(p ec2types.CapacityReservationPreference) func(*ec2types.RequestLaunchTemplateData) {
	return func(d *ec2types.RequestLaunchTemplateData) {
		d.CapacityReservationSpecification = &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{CapacityReservationPreference: p}
	}
}

func target(id string) func(*ec2types.RequestLaunchTemplateData) {
	return func(d *ec2types.RequestLaunchTemplateData) {
		d.CapacityReservationSpecification = &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationTarget: &ec2types.CapacityReservationTarget{CapacityReservationId: aws.String(id)},
		}
	}
}

// A reserved launch as the AWS provider asks for it: on-demand, the
// template targeting the reservation. The reservation's one slot is
// never given twice.
func TestFleetTargetedReservation(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	lt := createTemplate(t, f, "reserved", target("cr-small"))
	in := fleetInput(lt, v1.CapacityTypeOnDemand, override("m5.large", subnetA))
	first := launch(t, f, in)
	if diff := cmp.Diff(outcome{Launched: "m5.large/" + subnetA + "/on-demand"}, outcomeOf(first)); diff != "" {
		t.Fatalf("first (-want +got):\n%s", diff)
	}
	desc, err := f.client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: first.Instances[0].InstanceIds})
	if err != nil {
		t.Fatal(err)
	}
	inst := desc.Reservations[0].Instances[0]
	spec := inst.CapacityReservationSpecification
	if aws.ToString(inst.CapacityReservationId) != "cr-small" || spec.CapacityReservationTarget == nil || aws.ToString(spec.CapacityReservationTarget.CapacityReservationId) != "cr-small" {
		t.Errorf("instance reservation %v, spec %+v", aws.ToString(inst.CapacityReservationId), spec)
	}
	in.ClientToken = aws.String("another")
	second := launch(t, f, in)
	if diff := cmp.Diff(outcome{Errors: []string{"m5.large/us-west-2a/on-demand: ReservationCapacityExceeded"}}, outcomeOf(second)); diff != "" {
		t.Errorf("second (-want +got):\n%s", diff)
	}
	if r := f.server.Cloud().Snapshot().Reservations["cr-small"]; r.Used != 1 {
		t.Errorf("reservation holds %d instances, want 1", r.Used)
	}
	// An override the reservation is not for is refused.
	mismatch := launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override("m5.large", subnetB)))
	if diff := cmp.Diff(outcome{Errors: []string{"m5.large/us-west-2b/on-demand: Unsupported"}}, outcomeOf(mismatch)); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestFleetRequestErrors(t *testing.T) {
	f := newFixture(t, profile())
	lt := createTemplate(t, f, "plain", nil)
	createTemplate(t, f, "lost", target("cr-gone-0"))
	for _, tc := range []struct {
		name string
		mod  func(*ec2.CreateFleetInput)
		want string
	}{
		{"maintain fleet", func(in *ec2.CreateFleetInput) { in.Type = ec2types.FleetTypeMaintain }, "InvalidParameterValue"},
		{"unknown template", func(in *ec2.CreateFleetInput) {
			in.LaunchTemplateConfigs[0].LaunchTemplateSpecification.LaunchTemplateName = aws.String("nope")
		}, "InvalidLaunchTemplateName.NotFoundException"},
		{"unknown template id", func(in *ec2.CreateFleetInput) {
			in.LaunchTemplateConfigs[0].LaunchTemplateSpecification = &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateId: aws.String("lt-0000000000000000f"), Version: aws.String("1")}
		}, "InvalidLaunchTemplateId.NotFound"},
		{"unknown subnet", func(in *ec2.CreateFleetInput) {
			in.LaunchTemplateConfigs[0].Overrides[0].SubnetId = aws.String("subnet-0000000000000000f")
		}, "InvalidSubnetID.NotFound"},
		{"unknown image", func(in *ec2.CreateFleetInput) {
			in.LaunchTemplateConfigs[0].Overrides[0].ImageId = aws.String("ami-0000000000000ffff")
		}, "InvalidAMIID.NotFound"},
		{"unknown instance type", func(in *ec2.CreateFleetInput) { in.LaunchTemplateConfigs[0].Overrides[0].InstanceType = "x9.huge" }, "InvalidParameterValue"},
		{"unknown reservation", func(in *ec2.CreateFleetInput) {
			in.LaunchTemplateConfigs[0].LaunchTemplateSpecification.LaunchTemplateName = aws.String("lost")
		}, "InvalidCapacityReservationId.NotFound"},
		{"interruptible reserved capacity", func(in *ec2.CreateFleetInput) {
			in.TargetCapacitySpecification.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeReservedCapacity
		}, "InvalidParameterValue"},
		{"capacity block without a block", func(in *ec2.CreateFleetInput) {
			in.TargetCapacitySpecification.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeCapacityBlock
		}, "InvalidParameterValue"},
		{"bad max price", func(in *ec2.CreateFleetInput) {
			in.LaunchTemplateConfigs[0].Overrides[0].MaxPrice = aws.String("cheap")
		}, "InvalidParameterValue"},
		{"max price below EC2's minimum of 0.001", func(in *ec2.CreateFleetInput) {
			in.LaunchTemplateConfigs[0].Overrides[0].MaxPrice = aws.String("0.0005")
		}, "InvalidParameterValue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := fleetInput(lt, v1.CapacityTypeOnDemand, override("m5.large", subnetA))
			tc.mod(in)
			_, err := f.client.CreateFleet(context.Background(), in)
			if got := apiCode(t, err); got != tc.want {
				t.Errorf("code %q (%v), want %q", got, err, tc.want)
			}
		})
	}
	if n := len(f.server.Cloud().Snapshot().Instances); n != 0 {
		t.Errorf("%d instances launched by refused requests", n)
	}
}

// The same request with the same client token gets the same fleet and
// launches nothing more; reusing the token for another request fails.
func TestFleetClientToken(t *testing.T) {
	f := newFixture(t, profile())
	lt := createTemplate(t, f, "plain", nil)
	in := fleetInput(lt, v1.CapacityTypeOnDemand, override("m5.large", subnetA))
	in.ClientToken = aws.String("nodeclaim-uid")
	first, again := launch(t, f, in), launch(t, f, in)
	if *first.FleetId != *again.FleetId || first.Instances[0].InstanceIds[0] != again.Instances[0].InstanceIds[0] {
		t.Errorf("retry got fleet %s %v, first %s %v", *again.FleetId, again.Instances[0].InstanceIds, *first.FleetId, first.Instances[0].InstanceIds)
	}
	if n := len(f.server.Cloud().Snapshot().Instances); n != 1 {
		t.Errorf("%d instances, want 1", n)
	}
	in.LaunchTemplateConfigs[0].Overrides[0].InstanceType = "c5.large"
	_, err := f.client.CreateFleet(context.Background(), in)
	if code := apiCode(t, err); code != "IdempotentParameterMismatch" {
		t.Errorf("reused token: %q", code)
	}
}

// Two instances of one fleet from the same override come back in one
// item.
func TestFleetOfTwo(t *testing.T) {
	f := newFixture(t, profile())
	lt := createTemplate(t, f, "plain", nil)
	in := fleetInput(lt, v1.CapacityTypeOnDemand, override("m5.large", subnetA))
	in.TargetCapacitySpecification.TotalTargetCapacity = aws.Int32(2)
	out := launch(t, f, in)
	if len(out.Instances) != 1 || len(out.Instances[0].InstanceIds) != 2 {
		t.Errorf("instances %+v", out.Instances)
	}
}

// An instant fleet of three from a pool of two launches both and reports
// the third's error beside them, as EC2 answers a partly fulfilled
// instant fleet (CreateFleet: "instances ... and errors for the instances
// that could not be launched").
func TestFleetPartlyFulfilled(t *testing.T) {
	f := newFixture(t, profile(func(s *simv1alpha1.CloudProfileSpec) {
		s.Capacity = []simv1alpha1.CapacityPool{{InstanceType: "m5.large", Zone: "us-west-2a", CapacityType: v1.CapacityTypeOnDemand, Count: 2}}
	}))
	lt := createTemplate(t, f, "plain", nil)
	in := fleetInput(lt, v1.CapacityTypeOnDemand, override("m5.large", subnetA))
	in.TargetCapacitySpecification.TotalTargetCapacity = aws.Int32(3)
	out := launch(t, f, in)
	if len(out.Instances) != 1 || len(out.Instances[0].InstanceIds) != 2 {
		t.Errorf("instances %+v, want two in one item", out.Instances)
	}
	if diff := cmp.Diff([]string{"m5.large/us-west-2a/on-demand: InsufficientInstanceCapacity"}, outcomeOf(out).Errors); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// CreateFleet answers after the endpoint's latency, requests waiting it
// out side by side: two at once are both answered once the clock passes
// one latency, and nothing launches before.
func TestFleetLatency(t *testing.T) {
	const latency = 3 * time.Second
	f := newFixture(t, profile(), func(o *ec2endpoint.Options) { o.CreateFleetLatency = latency })
	lt := createTemplate(t, f, "plain", nil)
	before := f.clock.Waiters()
	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := f.client.CreateFleet(context.Background(), fleetInput(lt, v1.CapacityTypeOnDemand, override("m5.large", subnetA)))
			done <- err
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); f.clock.Waiters() < before+2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests waiting on the clock, want 2", f.clock.Waiters()-before)
		}
	}
	if n := len(f.server.Cloud().Snapshot().Instances); n != 0 {
		t.Errorf("%d instances before the latency passed", n)
	}
	f.clock.Step(latency)
	for range 2 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if n := len(f.server.Cloud().Snapshot().Instances); n != 2 {
		t.Errorf("%d instances, want 2", n)
	}
}
