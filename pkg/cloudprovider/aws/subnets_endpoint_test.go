package aws_test

import (
	"context"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// Zone a has two /28 subnets, subnet-...1 (first in the status) and
// subnet-...3, with used addresses given; zone b one /19.
func subnetEnv(t *testing.T, used1, used3 int) (*aws.Provider, *ec2.Client, *awsv1.EC2NodeClass) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	api, cluster := endpoint(t, ec2endpoint.Options{Clock: clk, ClusterName: "subnets", Profile: &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: simv1alpha1.CloudStyleAWS,
		Subnets: []simv1alpha1.Subnet{{Zone: "us-west-2a", PrefixLength: 28, UsedAddresses: used1}, {Zone: "us-west-2a", PrefixLength: 28, UsedAddresses: used3}},
	}}})
	class := readyNodeClass(t, api, "subnets")
	p, err := aws.New(api, aws.Options{Region: "us-west-2", ClusterName: "subnets", Clock: clk, NodeClasses: nodeClasses{class.Name: class}, Cluster: cluster})
	if err != nil {
		t.Fatal(err)
	}
	return p, api, class
}

func zoneANodeClaim(class *awsv1.EC2NodeClass, name string) *v1.NodeClaim {
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID("uid-" + name), Labels: map[string]string{v1.NodePoolLabelKey: "subnets"}}}
	nc.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: aws.NodeClassKind, Name: class.Name}
	nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
		{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}},
		{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-2a"}},
		{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}},
	}
	return nc
}

// subnetOf is the subnet the NodeClaim's instance runs in.
func subnetOf(t *testing.T, api *ec2.Client, nc *v1.NodeClaim) string {
	t.Helper()
	out, err := api.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: awssdk.String("tag:karpenter.sh/nodeclaim"), Values: []string{nc.Name}}}})
	if err != nil || len(out.Reservations) != 1 || len(out.Reservations[0].Instances) != 1 {
		t.Fatalf("the instance of %s: %v, %v", nc.Name, out, err)
	}
	return awssdk.ToString(out.Reservations[0].Instances[0].SubnetId)
}

// Launches share a zone's subnets by their free addresses, counting the
// launches in flight: two subnets of one free address each take one
// launch each, where the first subnet alone would take one.
func TestLaunchesShareTheZonesSubnets(t *testing.T) {
	p, api, class := subnetEnv(t, 10, 10)
	var got []string
	for _, name := range []string{"nc-1", "nc-2"} {
		nc, err := p.Create(context.Background(), zoneANodeClaim(class, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got = append(got, subnetOf(t, api, nc))
	}
	if got[0] != "subnet-00000000000000001" || got[1] != "subnet-00000000000000003" {
		t.Errorf("subnets %v, want the first then the second", got)
	}
}

// A subnet full behind the counts the provider read (with maxPods 1 a
// launch is predicted to take one address): the launch is refused with
// InsufficientFreeAddressesInSubnet, an insufficient-capacity error that
// marks no offering; the next launch takes the zone's next subnet; once
// both are full the zone offers nothing.
func TestFullSubnetLaunchesInTheNext(t *testing.T) {
	p, api, class := subnetEnv(t, 8, 10)
	class.Spec.Kubelet = &awsv1.KubeletConfiguration{MaxPods: awssdk.Int32(1)}
	ctx := context.Background()
	first, err := p.Create(ctx, zoneANodeClaim(class, "nc-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := subnetOf(t, api, first); got != "subnet-00000000000000001" {
		t.Fatalf("first launch in %s, want subnet-00000000000000001 (three free)", got)
	}
	// Someone else takes subnet 1's last two addresses.
	for range 2 {
		if _, err := api.CreateFleet(ctx, &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant,
			TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand, TotalTargetCapacity: awssdk.Int32(1)},
			LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
				LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: awssdk.String(launchTemplateOf(t, api)), Version: awssdk.String("$Latest")},
				Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: "m5.large", SubnetId: awssdk.String("subnet-00000000000000001")}},
			}}}); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(name string) {
		t.Helper()
		_, err := p.Create(ctx, zoneANodeClaim(class, name))
		if ice, ok := cloudprovider.AsInsufficientCapacityError(err); !ok || len(ice.Offerings) != 0 {
			t.Fatalf("%s into a full subnet: %v, want an insufficient-capacity error marking no offering", name, err)
		}
	}
	refused("nc-2")
	third, err := p.Create(ctx, zoneANodeClaim(class, "nc-3"))
	if err != nil {
		t.Fatalf("after subnet 1 was found full: %v", err)
	}
	if got := subnetOf(t, api, third); got != "subnet-00000000000000003" {
		t.Fatalf("launch after the refusal in %s, want subnet-00000000000000003", got)
	}
	refused("nc-4")
	its, err := p.GetInstanceTypes(ctx, &v1.NodePool{Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{NodeClassRef: first.Spec.NodeClassRef}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range its {
		for _, o := range it.Offerings {
			if o.IsAvailable() != (o.Zone == "us-west-2b") {
				t.Fatalf("%s %s %s available %t: only zone b has a usable subnet", it.Name, o.Zone, o.CapacityType, o.IsAvailable())
			}
		}
	}
}

// launchTemplateOf is the name of the provider's (only) launch template.
func launchTemplateOf(t *testing.T, api *ec2.Client) string {
	t.Helper()
	out, err := api.DescribeLaunchTemplates(context.Background(), &ec2.DescribeLaunchTemplatesInput{})
	if err != nil || len(out.LaunchTemplates) == 0 {
		t.Fatalf("launch templates: %v, %v", out, err)
	}
	return awssdk.ToString(out.LaunchTemplates[0].LaunchTemplateName)
}
