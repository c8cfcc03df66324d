package ec2nodeclass

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	ownerA = "123456789012"
	ownerB = "210987654321"
)

// inventory is the account the selection tests look at; pageSize 1
// makes every describe call take one page per item.
func inventory() *fakeEC2 {
	day := 24 * time.Hour
	ended := reservation("cr-5", ownerA, ec2types.InstanceMatchCriteriaOpen, "team", "ml")
	ended.EndDate = aws.Time(start.Add(-time.Minute))
	cancelled := reservation("cr-4", ownerA, ec2types.InstanceMatchCriteriaOpen, "team", "ml")
	cancelled.State = ec2types.CapacityReservationStateCancelled
	i386 := image("ami-i386", "my-ami-i386", fakeAccount, ec2types.ArchitectureValuesI386, start, "team", "ml")
	return &fakeEC2{
		parameters: map[string]string{"/my/ami": "ami-amz", "/not-an-image": "hello"},
		now:        start,
		pageSize:   1,
		subnets: []ec2types.Subnet{
			subnet("subnet-a", "us-west-2a", "usw2-az1", 100, "team", "ml", "env", "prod"),
			subnet("subnet-b", "us-west-2b", "usw2-az2", 200, "team", "web", "env", "prod"),
			subnet("subnet-c", "us-west-2c", "usw2-az3", 50, "team", "ml"),
			{SubnetId: aws.String("subnet-d"), AvailabilityZone: aws.String("us-west-2a"), AvailableIpAddressCount: aws.Int32(10), Tags: tags("other", "x")},
		},
		groups: []ec2types.SecurityGroup{
			group("sg-1", "default", "team", "ml"),
			group("sg-2", "nodes", "team", "web", "kubernetes.io/cluster/x", "owned"),
			group("sg-3", "nodes-extra"),
		},
		images: []ec2types.Image{
			image("ami-own1", "my-ami-1", fakeAccount, ec2types.ArchitectureValuesX8664, start.Add(-2*day), "team", "ml"),
			image("ami-own2", "my-ami-2", fakeAccount, ec2types.ArchitectureValuesX8664, start.Add(-day), "team", "ml"),
			image("ami-own3", "my-ami-arm", fakeAccount, ec2types.ArchitectureValuesArm64, start.Add(-3*day), "team", "ml"),
			image("ami-pub", "my-ami-3", "999988887777", ec2types.ArchitectureValuesX8664, start),
			image("ami-amz", "amzn-custom", "amazon", ec2types.ArchitectureValuesX8664, start.Add(-day)),
			i386,
			deprecated(image("ami-dep", "dep-new", fakeAccount, ec2types.ArchitectureValuesX8664, start.Add(-time.Hour), "team", "dep"), start.Add(-time.Minute)),
			image("ami-ok", "dep-old", fakeAccount, ec2types.ArchitectureValuesX8664, start.Add(-10*day), "team", "dep"),
			deprecated(image("ami-dep-arm", "dep-arm", fakeAccount, ec2types.ArchitectureValuesArm64, start.Add(-day), "team", "dep"), start.Add(-time.Minute)),
		},
		reservations: []ec2types.CapacityReservation{
			reservation("cr-1", ownerA, ec2types.InstanceMatchCriteriaOpen, "team", "ml"),
			reservation("cr-2", ownerB, ec2types.InstanceMatchCriteriaTargeted, "team", "ml"),
			reservation("cr-3", ownerA, ec2types.InstanceMatchCriteriaTargeted),
			cancelled,
			ended,
		},
	}
}

func subnetIDs(s awsv1.EC2NodeClassStatus) []string {
	var out []string
	for _, x := range s.Subnets {
		out = append(out, x.ID)
	}
	return out
}

func groupIDs(s awsv1.EC2NodeClassStatus) []string {
	var out []string
	for _, x := range s.SecurityGroups {
		out = append(out, x.ID+"/"+x.Name)
	}
	return out
}

// amiIDs are the status images as id/arch, id/arch/variant-keys for an
// alias's.
func amiIDs(s awsv1.EC2NodeClassStatus) []string {
	var out []string
	for _, x := range s.AMIs {
		id := x.ID
		for _, r := range x.Requirements {
			if r.Key == corev1.LabelArchStable {
				id += "/" + strings.Join(r.Values, ",")
			} else {
				id += "/" + r.Key[strings.LastIndex(r.Key, "/")+1:] + "-" + string(r.Operator)
			}
		}
		if x.Deprecated {
			id += "(deprecated)"
		}
		out = append(out, id)
	}
	return out
}

func reservationIDs(s awsv1.EC2NodeClassStatus) []string {
	var out []string
	for _, x := range s.CapacityReservations {
		out = append(out, x.ID)
	}
	return out
}

// Gather then Resolve over the fake account: what each kind of selector
// term selects.
func TestSelection(t *testing.T) {
	type terms = awsv1.EC2NodeClassSpec
	cases := []struct {
		name string
		spec awsv1.EC2NodeClassSpec
		got  func(awsv1.EC2NodeClassStatus) []string
		want []string
	}{
		{"subnet by id", terms{SubnetSelectorTerms: []awsv1.SubnetSelectorTerm{{ID: "subnet-c"}}}, subnetIDs, []string{"subnet-c"}},
		{"subnets by tag, most free addresses first", terms{SubnetSelectorTerms: []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"team": "ml"}}}}, subnetIDs, []string{"subnet-a", "subnet-c"}},
		{"subnet tags ANDed", terms{SubnetSelectorTerms: []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"team": "ml", "env": "prod"}}}}, subnetIDs, []string{"subnet-a"}},
		{"subnet tag * is any value", terms{SubnetSelectorTerms: []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"env": "*"}}}}, subnetIDs, []string{"subnet-b", "subnet-a"}},
		{"subnet terms ORed", terms{SubnetSelectorTerms: []awsv1.SubnetSelectorTerm{{ID: "subnet-d"}, {Tags: map[string]string{"team": "web"}}, {ID: "subnet-b"}}}, subnetIDs, []string{"subnet-b", "subnet-d"}},
		{"subnet id and tags ANDed", terms{SubnetSelectorTerms: []awsv1.SubnetSelectorTerm{{ID: "subnet-c", Tags: map[string]string{"env": "prod"}}}}, subnetIDs, nil},
		{"no subnet", terms{SubnetSelectorTerms: []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"team": "nobody"}}}}, subnetIDs, nil},

		{"security group by id", terms{SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{ID: "sg-3"}}}, groupIDs, []string{"sg-3/nodes-extra"}},
		{"security group by GroupName, exactly", terms{SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Name: "nodes"}}}, groupIDs, []string{"sg-2/nodes"}},
		{"security groups by tag *", terms{SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"team": "*"}}}}, groupIDs, []string{"sg-1/default", "sg-2/nodes"}},
		{"security group tags with a slash", terms{SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"kubernetes.io/cluster/x": "owned"}}}}, groupIDs, []string{"sg-2/nodes"}},
		{"security group terms ORed", terms{SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Name: "default"}, {ID: "sg-3"}, {Name: "nodes"}}}, groupIDs, []string{"sg-1/default", "sg-2/nodes", "sg-3/nodes-extra"}},
		{"security group name and tags ANDed", terms{SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Name: "default", Tags: map[string]string{"team": "web"}}}}, groupIDs, nil},

		{"image by id", terms{AMISelectorTerms: []awsv1.AMISelectorTerm{{ID: "ami-own1"}}}, amiIDs, []string{"ami-own1/amd64"}},
		{"images by name: self and amazon by default, newest per arch", terms{AMISelectorTerms: []awsv1.AMISelectorTerm{{Name: "my-ami-*"}}}, amiIDs, []string{"ami-own2/amd64", "ami-own3/arm64"}},
		{"images by name and owner", terms{AMISelectorTerms: []awsv1.AMISelectorTerm{{Name: "my-ami-?", Owner: "999988887777"}}}, amiIDs, []string{"ami-pub/amd64"}},
		{"images by name, owner amazon", terms{AMISelectorTerms: []awsv1.AMISelectorTerm{{Name: "amzn-*", Owner: "amazon"}}}, amiIDs, []string{"ami-amz/amd64"}},
		{"images by tags, i386 left out", terms{AMISelectorTerms: []awsv1.AMISelectorTerm{{Tags: map[string]string{"team": "ml"}}}}, amiIDs, []string{"ami-own2/amd64", "ami-own3/arm64"}},
		{"deprecated images only when nothing else matches", terms{AMISelectorTerms: []awsv1.AMISelectorTerm{{Tags: map[string]string{"team": "dep"}}}}, amiIDs,
			[]string{"ami-dep-arm/arm64(deprecated)", "ami-ok/amd64"}},
		{"image terms ORed", terms{AMISelectorTerms: []awsv1.AMISelectorTerm{{ID: "ami-amz"}, {Name: "my-ami-arm"}}}, amiIDs, []string{"ami-amz/amd64", "ami-own3/arm64"}},
		// The parameter's image id alone: the term's other fields are not
		// read, as in the reference.
		{"image by ssmParameter", terms{AMISelectorTerms: []awsv1.AMISelectorTerm{{SSMParameter: "/my/ami", Tags: map[string]string{"team": "nobody"}}}}, amiIDs, []string{"ami-amz/amd64"}},
		{"image ssmParameter missing or not an image id selects nothing", terms{AMISelectorTerms: []awsv1.AMISelectorTerm{{SSMParameter: "/missing"}, {SSMParameter: "/not-an-image"}}}, amiIDs, nil},

		{"reservation by id", terms{CapacityReservationSelectorTerms: []awsv1.CapacityReservationSelectorTerm{{ID: "cr-3"}}}, reservationIDs, []string{"cr-3"}},
		{"reservation by an id that does not exist", terms{CapacityReservationSelectorTerms: []awsv1.CapacityReservationSelectorTerm{{ID: "cr-404"}, {ID: "cr-1"}}}, reservationIDs, []string{"cr-1"}},
		{"reservations by tags: cancelled and ended left out", terms{CapacityReservationSelectorTerms: []awsv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "ml"}}}}, reservationIDs, []string{"cr-1", "cr-2"}},
		{"reservations by tags and ownerID", terms{CapacityReservationSelectorTerms: []awsv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "*"}, OwnerID: ownerB}}}, reservationIDs, []string{"cr-2"}},
		{"reservations by instanceMatchCriteria", terms{CapacityReservationSelectorTerms: []awsv1.CapacityReservationSelectorTerm{{InstanceMatchCriteria: awsv1.InstanceMatchCriteriaTargeted}}}, reservationIDs, []string{"cr-2", "cr-3"}},
		{"reservations by instanceMatchCriteria and ownerID", terms{CapacityReservationSelectorTerms: []awsv1.CapacityReservationSelectorTerm{{InstanceMatchCriteria: awsv1.InstanceMatchCriteriaOpen, OwnerID: ownerA}}}, reservationIDs, []string{"cr-1"}},
		{"an ownerID alone selects nothing", terms{CapacityReservationSelectorTerms: []awsv1.CapacityReservationSelectorTerm{{OwnerID: ownerA}}}, reservationIDs, nil},
		{"reservation terms ORed", terms{CapacityReservationSelectorTerms: []awsv1.CapacityReservationSelectorTerm{{ID: "cr-3"}, {Tags: map[string]string{"team": "ml"}, OwnerID: ownerA}}}, reservationIDs, []string{"cr-1", "cr-3"}},
		{"no reservation terms, no reservations", terms{}, reservationIDs, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc := &awsv1.EC2NodeClass{Spec: tc.spec}
			api := inventory()
			found := Gather(context.Background(), api, api, nc, "1.30")
			if err := found.Err(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tc.got(Resolve(nc, found, start))); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
		})
	}
}

// Subnets carry their zone and zone id as DescribeSubnets answers them,
// and nothing else is asked: the reference's controller policy allows no
// DescribeAvailabilityZones. EC2 always answers a subnet's zone id;
// subnet-d stands for one answered without it, which is taken as it is.
func TestSubnetZones(t *testing.T) {
	api := inventory()
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{SubnetSelectorTerms: []awsv1.SubnetSelectorTerm{{ID: "subnet-a"}, {ID: "subnet-d"}}}}
	found := Gather(context.Background(), api, nil, nc, "")
	if err := found.Err(); err != nil {
		t.Fatal(err)
	}
	got := Resolve(nc, found, start).Subnets
	want := []awsv1.Subnet{{ID: "subnet-a", Zone: "us-west-2a", ZoneID: "usw2-az1"}, {ID: "subnet-d", Zone: "us-west-2a"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subnets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"DescribeSubnets"}, slices.Sorted(maps.Keys(api.calls))); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// A failing call fails its kind only; the error is in Found.Err, and an
// alias that cannot be resolved is not a failure to retry.
func TestGatherErrors(t *testing.T) {
	api := inventory()
	denied := errors.New("UnauthorizedOperation: not allowed to describe subnets")
	api.setFail("DescribeSubnets", denied)
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{ID: "subnet-a"}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{ID: "sg-1"}},
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2@latest"}},
	}}
	found := Gather(context.Background(), api, nil, nc, "1.33")
	if !errors.Is(found.SubnetsErr, denied) || !strings.HasPrefix(found.SubnetsErr.Error(), "describing subnets, ") {
		t.Errorf("SubnetsErr %v, want the wrapped denial", found.SubnetsErr)
	}
	if len(found.SecurityGroups) != 1 || found.SecurityGroupsErr != nil {
		t.Errorf("security groups %v, %v: want sg-1, gathered despite the subnet failure", found.SecurityGroups, found.SecurityGroupsErr)
	}
	if _, ok := errors.AsType[*AliasError](found.ImagesErr); !ok {
		t.Errorf("ImagesErr %v, want an *AliasError", found.ImagesErr)
	}
	if err := found.Err(); !errors.Is(err, denied) || strings.Contains(err.Error(), "al2") {
		t.Errorf("Err() %v, want the subnet failure only", err)
	}
	status := Resolve(nc, found, start)
	if c := meta.FindStatusCondition(status.Conditions, awsv1.ConditionTypeSubnetsReady); c.Status != metav1.ConditionUnknown || c.Reason != ReasonDescribeFailed {
		t.Errorf("SubnetsReady %+v, want Unknown/%s", c, ReasonDescribeFailed)
	}
	if c := meta.FindStatusCondition(status.Conditions, awsv1.ConditionTypeAMIsReady); c.Status != metav1.ConditionFalse || c.Reason != ReasonUnsupportedAlias {
		t.Errorf("AMIsReady %+v, want False/%s", c, ReasonUnsupportedAlias)
	}
	if (Found{}).Err() != nil {
		t.Errorf("no failure, yet Err() is not nil")
	}
}
