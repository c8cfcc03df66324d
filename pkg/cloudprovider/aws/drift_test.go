package aws_test

import (
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

// hashBase is the smallest class of the reference's docs, with the
// metadata options the API server defaults.
func hashBase() *awsv1.EC2NodeClass {
	return &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{
		Role:                       "KarpenterNodeRole-my-cluster",
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "my-cluster"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "my-cluster"}}},
		MetadataOptions: &awsv1.MetadataOptions{HTTPEndpoint: ptr.To("enabled"), HTTPProtocolIPv6: ptr.To("disabled"),
			HTTPPutResponseHopLimit: ptr.To(int64(1)), HTTPTokens: ptr.To("required")},
	}}
}

// The expected values are what the reference's own EC2NodeClass.Hash
// (v1.14.1, pkg/apis/v1/ec2nodeclass.go, with its hashstructure v2.0.2)
// returned for the same specs built from the reference's types: a
// throwaway program, not kept, compiled that file with stubs for the
// constants it takes from other files and printed the hashes. The
// version is its EC2NodeClassHashVersion.
func TestNodeClassHashIsTheReferences(t *testing.T) {
	const ca = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="
	for _, tc := range []struct {
		name string
		edit func(*awsv1.EC2NodeClassSpec)
		ca   string
		want string
	}{
		{"minimal", func(*awsv1.EC2NodeClassSpec) {}, "", "3264784757450422700"},
		{"minimal with CA", func(*awsv1.EC2NodeClassSpec) {}, ca, "14589346032896349679"},
		// The resolved family is hashed, not the field.
		{"amiFamily AL2023 next to the alias", func(s *awsv1.EC2NodeClassSpec) { s.AMIFamily = ptr.To("AL2023") }, "", "3264784757450422700"},
		{"amiFamily Custom next to the alias", func(s *awsv1.EC2NodeClassSpec) { s.AMIFamily = ptr.To("Custom") }, "", "7738246109596778157"},
		// Fields tagged hash:"ignore" in the reference.
		{"selectors and ipPrefixCount changed", func(s *awsv1.EC2NodeClassSpec) {
			s.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "al2023@v20240625"}}
			s.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{ID: "subnet-0a1"}}
			s.SecurityGroupSelectorTerms = []awsv1.SecurityGroupSelectorTerm{{ID: "sg-0a1"}}
			s.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{ID: "cr-0a1"}}
			s.IPPrefixCount = ptr.To(int32(2))
		}, "", "3264784757450422700"},
		{"bottlerocket alias", func(s *awsv1.EC2NodeClassSpec) {
			s.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "bottlerocket@latest"}}
		}, "", "7863166884747920448"},
		{"tags", func(s *awsv1.EC2NodeClassSpec) { s.Tags = map[string]string{"team": "ml", "env": "prod"} }, "", "2751005001415655057"},
		{"everything", func(s *awsv1.EC2NodeClassSpec) {
			s.Tags = map[string]string{"team": "ml"}
			s.UserData = ptr.To("[settings.kubernetes]\nmax-pods = 50\n")
			s.Kubelet = &awsv1.KubeletConfiguration{MaxPods: ptr.To(int32(110)), ClusterDNS: []string{"10.0.0.10"},
				KubeReserved: map[string]awsv1.Quantity{"cpu": "100m"}, EvictionHard: map[string]awsv1.EvictionThreshold{"memory.available": "5%"}}
			s.BlockDeviceMappings = []awsv1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/xvda"), RootVolume: true,
				EBS: &awsv1.BlockDevice{VolumeSize: ptr.To(resource.MustParse("100Gi")), VolumeType: ptr.To("gp3"), Encrypted: ptr.To(true)}}}
			s.InstanceStorePolicy = ptr.To(awsv1.InstanceStorePolicyRAID0)
			s.DetailedMonitoring = ptr.To(true)
			s.AssociatePublicIPAddress = ptr.To(false)
			s.Context = ptr.To("ctx-0a1")
			s.PlacementGroupSelector = &awsv1.PlacementGroupSelector{Name: ptr.To("training")}
			s.NetworkInterfaces = []awsv1.NetworkInterface{{NetworkCardIndex: 0, DeviceIndex: 0, InterfaceType: awsv1.InterfaceTypeInterface},
				{NetworkCardIndex: 1, DeviceIndex: 1, InterfaceType: awsv1.InterfaceTypeEFAOnly}}
			s.ConnectionTracking = &awsv1.ConnectionTracking{TCPEstablishedTimeout: ptr.To(int32(3600))}
			s.CPUOptions = &awsv1.CPUOptions{NestedVirtualization: ptr.To("enabled")}
		}, "", "12073713804412408733"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class := hashBase()
			tc.edit(&class.Spec)
			if got := aws.NodeClassHash(class, tc.ca); got != tc.want {
				t.Errorf("NodeClassHash = %s, want the reference's %s", got, tc.want)
			}
		})
	}
	if aws.NodeClassHashVersion != "v5" {
		t.Errorf("NodeClassHashVersion = %s, want the reference's v5", aws.NodeClassHashVersion)
	}
}

func TestDrift(t *testing.T) {
	hashed := func(hash, version string) map[string]string {
		return map[string]string{aws.NodeClassHashAnnotationKey: hash, aws.NodeClassHashVersionAnnotationKey: version}
	}
	class := func(annotations map[string]string, reservations ...string) *awsv1.EC2NodeClass {
		c := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", Annotations: annotations}, Status: awsv1.EC2NodeClassStatus{
			AMIs:           []awsv1.AMI{{ID: "ami-1"}},
			Subnets:        []awsv1.Subnet{{ID: "subnet-1", Zone: "us-west-2a"}},
			SecurityGroups: []awsv1.SecurityGroup{{ID: "sg-2"}, {ID: "sg-1"}},
		}}
		for _, id := range reservations {
			c.Status.CapacityReservations = append(c.Status.CapacityReservations, awsv1.CapacityReservation{ID: id})
		}
		return c
	}
	claim := func(annotations map[string]string) *v1.NodeClaim {
		return &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "a", Annotations: annotations}}
	}
	instance := func(edit func(*ec2types.Instance)) ec2types.Instance {
		i := ec2types.Instance{ImageId: awssdk.String("ami-1"), SubnetId: awssdk.String("subnet-1"),
			SecurityGroups: []ec2types.GroupIdentifier{{GroupId: awssdk.String("sg-1")}, {GroupId: awssdk.String("sg-2")}}}
		if edit != nil {
			edit(&i)
		}
		return i
	}
	inReservation := func(i *ec2types.Instance) { i.CapacityReservationId = awssdk.String("cr-1") }
	inGroup := func(id string) func(*ec2types.Instance) {
		return func(i *ec2types.Instance) { i.Placement = &ec2types.Placement{GroupId: awssdk.String(id)} }
	}
	withGroup := func(c *awsv1.EC2NodeClass, id string) *awsv1.EC2NodeClass {
		c.Status.PlacementGroup = &awsv1.PlacementGroup{ID: id}
		return c
	}
	for _, tc := range []struct {
		name  string
		claim *v1.NodeClaim
		class *awsv1.EC2NodeClass
		inst  ec2types.Instance
		want  cloudprovider.DriftReason
	}{
		{"nothing changed", claim(hashed("1", "v5")), class(hashed("1", "v5")), instance(nil), ""},
		{"hash changed", claim(hashed("1", "v5")), class(hashed("2", "v5")), instance(nil), aws.DriftNodeClass},
		// A claim of another hash version (re-stamped by the class's
		// controller) or without a hash is not judged by it.
		{"hash of another version", claim(hashed("1", "v4")), class(hashed("2", "v5")), instance(nil), ""},
		{"claim without hash", claim(nil), class(hashed("2", "v5")), instance(nil), ""},
		{"class not stamped yet", claim(hashed("1", "v5")), class(nil), instance(nil), ""},
		{"image", claim(nil), class(nil), instance(func(i *ec2types.Instance) { i.ImageId = awssdk.String("ami-0") }), aws.DriftAMI},
		{"security groups", claim(nil), class(nil), instance(func(i *ec2types.Instance) { i.SecurityGroups = i.SecurityGroups[:1] }), aws.DriftSecurityGroup},
		{"subnet", claim(nil), class(nil), instance(func(i *ec2types.Instance) { i.SubnetId = awssdk.String("subnet-0") }), aws.DriftSubnet},
		{"reservation still selected", claim(nil), class(nil, "cr-0", "cr-1"), instance(inReservation), ""},
		{"reservation deselected", claim(nil), class(nil, "cr-0"), instance(inReservation), aws.DriftCapacityReservation},
		{"no reservation, none selected", claim(nil), class(nil), instance(nil), ""},
		{"placement group of the class", claim(nil), withGroup(class(nil), "pg-1"), instance(inGroup("pg-1")), ""},
		{"placement group changed", claim(nil), withGroup(class(nil), "pg-2"), instance(inGroup("pg-1")), aws.DriftPlacementGroup},
		{"placement group added", claim(nil), withGroup(class(nil), "pg-2"), instance(nil), aws.DriftPlacementGroup},
		{"placement group removed", claim(nil), class(nil), instance(inGroup("pg-1")), aws.DriftPlacementGroup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aws.Drift(tc.claim, tc.class, tc.inst); got != tc.want {
				t.Errorf("Drift = %q, want %q", got, tc.want)
			}
		})
	}
}
