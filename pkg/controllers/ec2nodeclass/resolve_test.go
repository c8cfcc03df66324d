package ec2nodeclass

import (
	"errors"
	"fmt"
	"testing"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	awsprovider "github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

// goodClass selects what goodFound holds; generation 3.
func goodClass() *awsv1.EC2NodeClass {
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"team": "ml"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Name: "nodes"}},
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Tags: map[string]string{"team": "ml"}}},
		AMIFamily:                  ptr.To(awsv1.AMIFamilyAL2023),
		InstanceProfile:            ptr.To("capstan-node"),
	}}
	nc.Name, nc.Generation = "default", 3
	return nc
}

func goodFound() Found {
	return Found{
		Subnets:        []ec2types.Subnet{subnet("subnet-a", "us-west-2a", "usw2-az1", 100)},
		SecurityGroups: []ec2types.SecurityGroup{group("sg-2", "nodes")},
		Images:         []FoundImages{{Images: []ec2types.Image{image("ami-1", "my-ami", fakeAccount, ec2types.ArchitectureValuesX8664, start)}}},
		Bootstrap:      awsprovider.Bootstrap{Endpoint: "https://api", CABundle: "Q0E=", ServiceCIDR: "172.20.0.0/16"},
	}
}

// conditionsText is conditions as "Type=Status/Reason: message", in
// status order.
func conditionsText(conds []metav1.Condition) []string {
	var out []string
	for _, c := range conds {
		out = append(out, fmt.Sprintf("%s=%s/%s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	return out
}

func allTrueBut(failing ...string) []string {
	out := []string{
		"SubnetsReady=True/SubnetsReady: ",
		"SecurityGroupsReady=True/SecurityGroupsReady: ",
		"AMIsReady=True/AMIsReady: ",
		"InstanceProfileReady=True/InstanceProfileReady: ",
		"CapacityReservationsReady=True/CapacityReservationsReady: ",
		"ValidationSucceeded=True/ValidationSucceeded: ",
		"Ready=True/Ready: ",
		"PlacementGroupReady=True/PlacementGroupReady: ",
	}
	for i, f := range failing {
		if f != "" {
			out[i] = f
		}
	}
	return out
}

func TestResolveConditions(t *testing.T) {
	denied := errors.New("UnauthorizedOperation")
	withPrevious := func(generation int64) func(*awsv1.EC2NodeClass, *Found) {
		return func(nc *awsv1.EC2NodeClass, f *Found) {
			nc.Status = Resolve(nc, goodFound(), start.Add(-time.Hour))
			nc.Generation = generation
			f.SubnetsErr = denied
		}
	}
	cases := []struct {
		name    string
		mod     func(*awsv1.EC2NodeClass, *Found)
		want    []string
		subnets int
	}{
		{"everything found", func(*awsv1.EC2NodeClass, *Found) {}, allTrueBut(), 1},
		{"no subnet", func(_ *awsv1.EC2NodeClass, f *Found) { f.Subnets = nil }, allTrueBut(
			`SubnetsReady=False/SubnetsNotFound: no subnet matches subnetSelectorTerms [{"tags":{"team":"ml"}}]`, "", "", "", "", "",
			`Ready=False/SubnetsNotFound: SubnetsReady=False: no subnet matches subnetSelectorTerms [{"tags":{"team":"ml"}}]`), 0},
		{"no security group", func(_ *awsv1.EC2NodeClass, f *Found) { f.SecurityGroups = nil }, allTrueBut(
			"", `SecurityGroupsReady=False/SecurityGroupsNotFound: no security group matches securityGroupSelectorTerms [{"name":"nodes"}]`, "", "", "", "",
			`Ready=False/SecurityGroupsNotFound: SecurityGroupsReady=False: no security group matches securityGroupSelectorTerms [{"name":"nodes"}]`), 1},
		{"a role whose profile the controller made", func(nc *awsv1.EC2NodeClass, f *Found) {
			nc.Spec.InstanceProfile, nc.Spec.Role = nil, "KarpenterNodeRole"
			f.InstanceProfile = "cluster_1"
		}, allTrueBut(), 1},
		{"a role that does not exist", func(nc *awsv1.EC2NodeClass, f *Found) {
			nc.Spec.InstanceProfile, nc.Spec.Role = nil, "KarpenterNodeRole"
			f.InstanceProfileErr = fmt.Errorf("adding role KarpenterNodeRole to instance profile cluster_1, %w",
				&smithy.GenericAPIError{Code: "NoSuchEntity", Message: "The role with name KarpenterNodeRole cannot be found."})
		}, allTrueBut("", "", "",
			`InstanceProfileReady=False/RoleNotFound: role "KarpenterNodeRole" in spec.role does not exist in the account; create it or fix spec.role: adding role KarpenterNodeRole to instance profile cluster_1, api error NoSuchEntity: The role with name KarpenterNodeRole cannot be found.`, "", "",
			`Ready=False/RoleNotFound: InstanceProfileReady=False: role "KarpenterNodeRole" in spec.role does not exist in the account; create it or fix spec.role: adding role KarpenterNodeRole to instance profile cluster_1, api error NoSuchEntity: The role with name KarpenterNodeRole cannot be found.`), 1},
		{"IAM refuses", func(nc *awsv1.EC2NodeClass, f *Found) {
			nc.Spec.InstanceProfile, nc.Spec.Role = nil, "KarpenterNodeRole"
			f.InstanceProfileErr = &smithy.GenericAPIError{Code: "AccessDenied", Message: "not authorized to perform: iam:CreateInstanceProfile"}
		}, allTrueBut("", "", "",
			`InstanceProfileReady=False/InstanceProfileCreationFailed: making the instance profile for spec.role "KarpenterNodeRole" failed, retrying (check the controller's IAM permissions): api error AccessDenied: not authorized to perform: iam:CreateInstanceProfile`, "", "",
			`Ready=False/InstanceProfileCreationFailed: InstanceProfileReady=False: making the instance profile for spec.role "KarpenterNodeRole" failed, retrying (check the controller's IAM permissions): api error AccessDenied: not authorized to perform: iam:CreateInstanceProfile`), 1},
		// Honoured since: an ssmParameter term, instanceStorePolicy.
		{"fields once unsupported", func(nc *awsv1.EC2NodeClass, _ *Found) {
			nc.Spec.AMISelectorTerms = append(nc.Spec.AMISelectorTerms, awsv1.AMISelectorTerm{SSMParameter: "/my/ami"})
			nc.Spec.InstanceStorePolicy = ptr.To(awsv1.InstanceStorePolicyRAID0)
		}, allTrueBut(), 1},
		{"a spot max price EC2 would refuse", func(nc *awsv1.EC2NodeClass, _ *Found) {
			nc.Annotations = map[string]string{awsv1.SpotMaxPriceAnnotationKey: "0.0001"}
		}, allTrueBut("", "", "", "", "",
			"ValidationSucceeded=False/InvalidSpotMaxPrice: annotation capstan.dev/spot-max-price \"0.0001\" is below EC2's minimum max price of 0.001 dollars",
			"Ready=False/InvalidSpotMaxPrice: ValidationSucceeded=False: annotation capstan.dev/spot-max-price \"0.0001\" is below EC2's minimum max price of 0.001 dollars"), 1},
		{"a spot max price", func(nc *awsv1.EC2NodeClass, _ *Found) {
			nc.Annotations = map[string]string{awsv1.SpotMaxPriceAnnotationKey: "0.05"}
		}, allTrueBut(), 1},
		{"the cluster's CIDR unknown", func(_ *awsv1.EC2NodeClass, f *Found) {
			f.Bootstrap.ServiceCIDR, f.BootstrapErr = "", errors.New("describing eks cluster prod, AccessDeniedException")
		}, allTrueBut("", "", "", "", "",
			"ValidationSucceeded=False/ClusterResolutionFailed: AL2023 user data needs the cluster's service CIDR (--service-cidr), which could not be discovered; set the flags or allow eks:DescribeCluster on the cluster: describing eks cluster prod, AccessDeniedException",
			"Ready=False/ClusterResolutionFailed: ValidationSucceeded=False: AL2023 user data needs the cluster's service CIDR (--service-cidr), which could not be discovered; set the flags or allow eks:DescribeCluster on the cluster: describing eks cluster prod, AccessDeniedException"), 1},
		{"the cluster unknown to a Custom family", func(nc *awsv1.EC2NodeClass, f *Found) {
			nc.Spec.AMIFamily, f.Bootstrap = ptr.To(awsv1.AMIFamilyCustom), awsprovider.Bootstrap{}
		}, allTrueBut(), 1},
		{"an alias Capstan cannot resolve", func(_ *awsv1.EC2NodeClass, f *Found) {
			f.ImagesErr = &AliasError{Reason: ReasonUnsupportedAlias, Message: "alias al2@latest: no"}
		}, allTrueBut("", "", "AMIsReady=False/UnsupportedAlias: alias al2@latest: no", "", "", "",
			"Ready=False/UnsupportedAlias: AMIsReady=False: alias al2@latest: no"), 1},
		{"an empty spec", func(nc *awsv1.EC2NodeClass, f *Found) {
			nc.Spec, *f = awsv1.EC2NodeClassSpec{}, Found{Bootstrap: goodFound().Bootstrap}
		}, []string{
			"SubnetsReady=False/SubnetsNotFound: spec.subnetSelectorTerms is empty",
			"SecurityGroupsReady=False/SecurityGroupsNotFound: spec.securityGroupSelectorTerms is empty",
			"AMIsReady=False/AMINotFound: spec.amiSelectorTerms is empty",
			"InstanceProfileReady=False/InstanceProfileNotSet: set spec.role or spec.instanceProfile",
			"CapacityReservationsReady=True/CapacityReservationsReady: ",
			"ValidationSucceeded=True/ValidationSucceeded: ",
			"Ready=False/SubnetsNotFound: SubnetsReady=False: spec.subnetSelectorTerms is empty; " +
				"SecurityGroupsReady=False: spec.securityGroupSelectorTerms is empty; AMIsReady=False: spec.amiSelectorTerms is empty; " +
				"InstanceProfileReady=False: set spec.role or spec.instanceProfile",
			"PlacementGroupReady=True/PlacementGroupReady: ",
		}, 0},
		{"a describe failure before anything was resolved", func(_ *awsv1.EC2NodeClass, f *Found) {
			f.SubnetsErr, f.CapacityReservationsErr = denied, denied
		}, allTrueBut("SubnetsReady=Unknown/DescribeFailed: describing subnets failed, retrying: UnauthorizedOperation", "", "", "",
			"CapacityReservationsReady=Unknown/DescribeFailed: describing capacity reservations failed, retrying: UnauthorizedOperation", "",
			"Ready=Unknown/DescribeFailed: SubnetsReady=Unknown: describing subnets failed, retrying: UnauthorizedOperation; "+
				"CapacityReservationsReady=Unknown: describing capacity reservations failed, retrying: UnauthorizedOperation"), 0},
		{"unknown and false: the false one's reason", func(_ *awsv1.EC2NodeClass, f *Found) {
			f.SubnetsErr, f.SecurityGroups = denied, nil
		}, allTrueBut("SubnetsReady=Unknown/DescribeFailed: describing subnets failed, retrying: UnauthorizedOperation",
			`SecurityGroupsReady=False/SecurityGroupsNotFound: no security group matches securityGroupSelectorTerms [{"name":"nodes"}]`, "", "", "", "",
			"Ready=False/SecurityGroupsNotFound: SubnetsReady=Unknown: describing subnets failed, retrying: UnauthorizedOperation; "+
				`SecurityGroupsReady=False: no security group matches securityGroupSelectorTerms [{"name":"nodes"}]`), 0},
		{"a describe failure keeps what was resolved for this generation", withPrevious(3), allTrueBut(), 1},
		{"but not what was resolved for an older one", withPrevious(4), allTrueBut(
			"SubnetsReady=Unknown/DescribeFailed: describing subnets failed, retrying: UnauthorizedOperation", "", "", "", "", "",
			"Ready=Unknown/DescribeFailed: SubnetsReady=Unknown: describing subnets failed, retrying: UnauthorizedOperation"), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc, found := goodClass(), goodFound()
			tc.mod(nc, &found)
			status := Resolve(nc, found, start)
			if diff := cmp.Diff(tc.want, conditionsText(status.Conditions)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			for _, c := range status.Conditions {
				if c.ObservedGeneration != nc.Generation {
					t.Errorf("%s observed generation %d, want %d", c.Type, c.ObservedGeneration, nc.Generation)
				}
			}
			if len(status.Subnets) != tc.subnets {
				t.Errorf("subnets %v, want %d", status.Subnets, tc.subnets)
			}
		})
	}
}

// The whole status of a good class, and what a second resolution keeps.
func TestResolveStatus(t *testing.T) {
	nc := goodClass()
	// A condition someone else owns is left alone.
	nc.Status.Conditions = []metav1.Condition{{Type: "Other", Status: metav1.ConditionTrue, Reason: "Other", LastTransitionTime: metav1.NewTime(start.Add(-time.Hour))}}
	first := Resolve(nc, goodFound(), start)
	want := awsv1.EC2NodeClassStatus{
		Subnets:         []awsv1.Subnet{{ID: "subnet-a", Zone: "us-west-2a", ZoneID: "usw2-az1"}},
		SecurityGroups:  []awsv1.SecurityGroup{{ID: "sg-2", Name: "nodes"}},
		AMIs:            []awsv1.AMI{{ID: "ami-1", Name: "my-ami", Requirements: requirementsOf("amd64")}},
		InstanceProfile: "capstan-node",
	}
	if diff := cmp.Diff(want, first, cmpIgnoreConditions()); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if len(nc.Status.Subnets) != 0 || len(nc.Status.Conditions) != 1 {
		t.Errorf("Resolve changed its input: %+v", nc.Status)
	}
	if other := meta.FindStatusCondition(first.Conditions, "Other"); other == nil || !other.LastTransitionTime.Time.Equal(start.Add(-time.Hour)) {
		t.Errorf("another controller's condition was changed: %+v", other)
	}

	// An hour on, the subnet is gone: only SubnetsReady and Ready
	// transition.
	nc.Status = first
	later := Resolve(nc, Found{SecurityGroups: goodFound().SecurityGroups, Images: goodFound().Images, Bootstrap: goodFound().Bootstrap}, start.Add(time.Hour))
	for _, c := range later.Conditions {
		moved := c.Type == awsv1.ConditionTypeSubnetsReady || c.Type == awsv1.ConditionTypeReady
		at := start
		switch {
		case moved:
			at = start.Add(time.Hour)
		case c.Type == "Other":
			at = start.Add(-time.Hour)
		}
		if !c.LastTransitionTime.Time.Equal(at) {
			t.Errorf("%s last transition %v, want %v", c.Type, c.LastTransitionTime, at)
		}
	}
}

func requirementsOf(arch string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}}
}

func cmpIgnoreConditions() cmp.Option {
	return cmpopts.IgnoreFields(awsv1.EC2NodeClassStatus{}, "Conditions")
}
