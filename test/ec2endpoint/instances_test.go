package ec2endpoint_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// describe pages through DescribeInstances.
func describe(t *testing.T, f *fixture, in *ec2.DescribeInstancesInput) []ec2types.Instance {
	t.Helper()
	var out []ec2types.Instance
	pager := ec2.NewDescribeInstancesPaginator(f.client, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Reservations {
			out = append(out, r.Instances...)
		}
	}
	return out
}

func ids(insts []ec2types.Instance) []string {
	var out []string
	for _, i := range insts {
		out = append(out, *i.InstanceId)
	}
	return out
}

func TestDescribeLaunchedInstance(t *testing.T) {
	f := newFixture(t, profile(spotPrices))
	lt := createTemplate(t, f, "spot-template", func(d *ec2types.RequestLaunchTemplateData) {
		d.TagSpecifications = []ec2types.LaunchTemplateTagSpecificationRequest{{ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{
			{Key: aws.String("from-template"), Value: aws.String("yes")}, {Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("overridden")},
		}}}
	})
	out := launch(t, f, fleetInput(lt, v1.CapacityTypeSpot, override("m5.large", subnetB)))
	id := out.Instances[0].InstanceIds[0]
	got := describe(t, f, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if len(got) != 1 {
		t.Fatalf("instances %v", ids(got))
	}
	inst := got[0]
	tags := map[string]string{}
	for _, tag := range inst.Tags {
		tags[*tag.Key] = *tag.Value
	}
	type summary struct {
		Type, Image, State, Zone, ZoneID, Subnet, VPC, Lifecycle, Arch string
		Groups                                                         []string
		Tags                                                           map[string]string
		SpotRequest, DNS, IP                                           bool
		Preference                                                     ec2types.CapacityReservationPreference
	}
	sum := summary{
		Type: string(inst.InstanceType), Image: *inst.ImageId, State: string(inst.State.Name), Zone: *inst.Placement.AvailabilityZone,
		ZoneID: *inst.Placement.AvailabilityZoneId, Subnet: *inst.SubnetId, VPC: *inst.VpcId, Lifecycle: string(inst.InstanceLifecycle),
		Arch: string(inst.Architecture), Tags: tags, SpotRequest: inst.SpotInstanceRequestId != nil,
		DNS:        *inst.PrivateDnsName == "ip-"+dashed(*inst.PrivateIpAddress)+".us-west-2.compute.internal",
		IP:         inst.PrivateIpAddress != nil && (*inst.PrivateIpAddress)[:8] == "10.0.32.",
		Preference: inst.CapacityReservationSpecification.CapacityReservationPreference,
	}
	for _, g := range inst.SecurityGroups {
		sum.Groups = append(sum.Groups, *g.GroupId+" "+*g.GroupName)
	}
	want := summary{
		Type: "m5.large", Image: amiX86, State: "pending", Zone: "us-west-2b", ZoneID: "usw2-az2", Subnet: subnetB, VPC: "vpc-00000000000000001",
		Lifecycle: "spot", Arch: "x86_64", Groups: []string{"sg-00000000000000002 test-cluster-node"},
		Tags:        map[string]string{"from-template": "yes", "karpenter.sh/nodeclaim": "default-abcde", "karpenter.sh/nodepool": "default"},
		SpotRequest: true, DNS: true, IP: true, Preference: ec2types.CapacityReservationPreferenceOpen,
	}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("instance (-want +got):\n%s", diff)
	}
	if !inst.LaunchTime.Equal(f.clock.Now()) {
		t.Errorf("launch time %v", inst.LaunchTime)
	}
	// Pending until the Node registers, at the profile's launch latency.
	f.clock.Step(2 * time.Second)
	if got := describe(t, f, &ec2.DescribeInstancesInput{InstanceIds: []string{id}}); got[0].State.Name != ec2types.InstanceStateNameRunning || *got[0].State.Code != 16 {
		t.Errorf("after the launch latency: %+v", got[0].State)
	}
	if nc := f.server.Cloud().Snapshot().Instances[id].NodeClaim; nc != "default-abcde" {
		t.Errorf("the simulated instance's nodeclaim %q", nc)
	}
}

func dashed(ip string) string {
	out := []byte(ip)
	for i, c := range out {
		if c == '.' {
			out[i] = '-'
		}
	}
	return string(out)
}

// The kubelet registers the instance's Node as EC2's would be named, with
// the provider ID the AWS provider reports.
func TestNodeLooksLikeEC2s(t *testing.T) {
	f := newFixture(t, profile())
	lt := createTemplate(t, f, "template", nil)
	out := launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override("c5.large", subnetA)))
	id := out.Instances[0].InstanceIds[0]
	inst := describe(t, f, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})[0]
	nodes := f.kubelet.Due(f.clock.Now().Add(time.Minute))
	if len(nodes) != 1 {
		t.Fatalf("%d nodes registered", len(nodes))
	}
	n := nodes[0]
	if n.Name != *inst.PrivateDnsName || n.Spec.ProviderID != "aws:///us-west-2a/"+id || n.Labels[corev1.LabelHostname] != n.Name {
		t.Errorf("node %s, provider id %s", n.Name, n.Spec.ProviderID)
	}
}

func TestDescribeInstancesFiltersAndPages(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	lt := createTemplate(t, f, "template", nil)
	var launched []string
	for range 6 {
		out := launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override("c5.large", subnetA)))
		launched = append(launched, out.Instances[0].InstanceIds[0])
	}
	if _, err := f.client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: launched[:2], Tags: []ec2types.Tag{{Key: aws.String("team"), Value: aws.String("a")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: launched[5:]}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   *ec2.DescribeInstancesInput
		want []string
	}{
		{"all, five a page", &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5)}, launched},
		{"tag", &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{filter("tag:team", "a")}}, launched[:2]},
		{"tag key and state", &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
			filter("tag-key", "karpenter.sh/nodepool"), filter("instance-state-name", "pending", "running", "stopping", "stopped", "shutting-down"),
		}}, launched[:5]},
		{"terminated", &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{filter("instance-state-name", "terminated")}}, launched[5:]},
		{"by id", &ec2.DescribeInstancesInput{InstanceIds: launched[2:4]}, launched[2:4]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ids(describe(t, f, tc.in))); diff != "" {
				t.Errorf("instances (-want +got):\n%s", diff)
			}
		})
	}
}

// Terminating twice answers as EC2 does while it still lists the
// instance; an instance it never had is an error.
func TestTerminateInstances(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	lt := createTemplate(t, f, "template", nil)
	id := launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override("c5.large", subnetA))).Instances[0].InstanceIds[0]
	f.clock.Step(time.Minute)
	changes := func() string {
		t.Helper()
		out, err := f.client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		c := out.TerminatingInstances[0]
		return *c.InstanceId + " " + string(c.PreviousState.Name) + " -> " + string(c.CurrentState.Name)
	}
	if got := changes(); got != id+" running -> shutting-down" {
		t.Errorf("first: %s", got)
	}
	if got := changes(); got != id+" terminated -> terminated" {
		t.Errorf("again: %s", got)
	}
	node := *describe(t, f, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})[0].PrivateDnsName
	if s := f.server.Cloud().Snapshot().Instances[id]; s.State != sim.InstanceTerminated || !f.kubelet.Stopped(node) {
		t.Errorf("simulated instance %s, node %s stopped: %v", s.State, node, f.kubelet.Stopped(node))
	}
	_, err := f.client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id, "i-0000000000000fff"}})
	if code := apiCode(t, err); code != "InvalidInstanceID.NotFound" {
		t.Errorf("unknown instance: %q", code)
	}
}

func TestCreateTags(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	lt := createTemplate(t, f, "template", nil)
	id := launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override("c5.large", subnetA))).Instances[0].InstanceIds[0]
	if _, err := f.client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: []ec2types.Tag{
		{Key: aws.String("Name"), Value: aws.String("default-abcde")}, {Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("renamed")},
	}}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Name": "default-abcde", "karpenter.sh/nodeclaim": "default-abcde", "karpenter.sh/nodepool": "renamed"}
	if got := f.server.Cloud().Snapshot().Instances[id].Tags; !cmp.Equal(want, got) {
		t.Errorf("tags %v", got)
	}
	for _, tc := range []struct {
		name      string
		resources []string
		key       string
		want      string
	}{
		{"reserved prefix", []string{id}, "aws:thing", "InvalidParameterValue"},
		{"unknown instance", []string{"i-0000000000000fff"}, "k", "InvalidInstanceID.NotFound"},
		{"unknown kind", []string{"vol-1"}, "k", "InvalidID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: tc.resources, Tags: []ec2types.Tag{{Key: aws.String(tc.key), Value: aws.String("v")}}})
			if got := apiCode(t, err); got != tc.want {
				t.Errorf("code %q, want %q", got, tc.want)
			}
		})
	}
}
