package aws

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
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

// launchClass is a Ready class of family with mappings, and a provider
// recording the launch templates it creates.
func launchClass(t *testing.T, family string, mappings []awsv1.BlockDeviceMapping) (*Provider, *templates, *awsv1.EC2NodeClass) {
	t.Helper()
	class := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	class.Spec.AMIFamily = ptr.To(family)
	class.Spec.BlockDeviceMappings = mappings
	class.Status.Subnets = []awsv1.Subnet{{ID: "subnet-a", Zone: "zone-a"}}
	class.Status.AMIs = []awsv1.AMI{{ID: "ami-amd64", Requirements: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}}
	api := &templates{}
	b := KnownCluster{Endpoint: "https://api.example", CABundle: base64.StdEncoding.EncodeToString([]byte("CA")), ServiceCIDR: "172.20.0.0/16", ClusterDNS: "172.20.0.10"}
	p, err := New(api, Options{Region: "us-west-2", ClusterName: "prod", Clock: clocktesting.NewFakeClock(time.Now()), NodeClasses: noClasses{}, Cluster: b})
	if err != nil {
		t.Fatal(err)
	}
	return p, api, class
}

func onDemand(it *cloudprovider.InstanceType) cloudprovider.LaunchCandidate {
	return cloudprovider.LaunchCandidate{InstanceType: it, Offering: &cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeOnDemand}}
}

var launchClaim = &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "web-abcde", Labels: map[string]string{v1.NodePoolLabelKey: "web"}}}

// A class without mappings launches with its AMI family's, the
// reference's (amifamily/{al2,al2023,bottlerocket,custom}.go
// DefaultBlockDeviceMappings, resolver.go DefaultEBS): AL2 and AL2023 a
// 20 GiB encrypted gp3 /dev/xvda, Bottlerocket 4 GiB /dev/xvda and
// 20 GiB /dev/xvdb, Custom none (the AMI's own); the class's own
// mappings replace them.
func TestLaunchTemplateBlockDevices(t *testing.T) {
	ebs := func(device string, gib int32) ec2types.LaunchTemplateBlockDeviceMappingRequest {
		return ec2types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: awssdk.String(device), Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{
			Encrypted: awssdk.Bool(true), VolumeType: ec2types.VolumeTypeGp3, VolumeSize: awssdk.Int32(gib),
		}}
	}
	own := []awsv1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/xvda"), RootVolume: true, EBS: &awsv1.BlockDevice{
		Encrypted: ptr.To(true), VolumeType: ptr.To("gp3"), VolumeSize: ptr.To(resource.MustParse("100Gi")),
	}}}
	cases := []struct {
		family   string
		mappings []awsv1.BlockDeviceMapping
		want     []ec2types.LaunchTemplateBlockDeviceMappingRequest
	}{
		{awsv1.AMIFamilyAL2023, nil, []ec2types.LaunchTemplateBlockDeviceMappingRequest{ebs("/dev/xvda", 20)}},
		{awsv1.AMIFamilyAL2, nil, []ec2types.LaunchTemplateBlockDeviceMappingRequest{ebs("/dev/xvda", 20)}},
		{awsv1.AMIFamilyBottlerocket, nil, []ec2types.LaunchTemplateBlockDeviceMappingRequest{ebs("/dev/xvda", 4), ebs("/dev/xvdb", 20)}},
		{awsv1.AMIFamilyCustom, nil, nil},
		{awsv1.AMIFamilyAL2023, own, []ec2types.LaunchTemplateBlockDeviceMappingRequest{ebs("/dev/xvda", 100)}},
	}
	m5 := catalog.InstanceType{Name: "m5.large", Family: "m5", Category: "m", Generation: 5, Size: "large", Architecture: catalog.ArchAMD64, VCPU: 2, MemoryMiB: 8192, MaxPods: 29}.CloudInstanceType("us-west-2")
	for _, tc := range cases {
		t.Run(tc.family, func(t *testing.T) {
			p, api, class := launchClass(t, tc.family, tc.mappings)
			if _, _, _, err := p.fleet(context.Background(), launchClaim, class, v1.CapacityTypeOnDemand, []cloudprovider.LaunchCandidate{onDemand(m5)}); err != nil {
				t.Fatal(err)
			}
			if len(api.created) != 1 {
				t.Fatalf("%d launch templates, want 1", len(api.created))
			}
			got := api.created[0].LaunchTemplateData.BlockDeviceMappings
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(ec2types.LaunchTemplateBlockDeviceMappingRequest{}, ec2types.LaunchTemplateEbsBlockDeviceRequest{})); diff != "" {
				t.Errorf("block device mappings (-want +got):\n%s", diff)
			}
		})
	}
}

// Types of different pod limits launch under different templates, each
// whose user data passes its own maxPods, as the reference groups
// instance types by maxPods (amifamily/resolver.go Resolve); types of
// one limit share one.
func TestLaunchTemplatesByMaxPods(t *testing.T) {
	shape := func(name string, vcpu, pods int) *cloudprovider.InstanceType {
		family, size, category, generation, _ := catalog.ParseName(name)
		return catalog.InstanceType{Name: name, Family: family, Category: category, Generation: generation, Size: size, Architecture: catalog.ArchAMD64,
			VCPU: vcpu, MemoryMiB: 4096 * int64(vcpu), MaxPods: pods}.CloudInstanceType("us-west-2")
	}
	cands := []cloudprovider.LaunchCandidate{onDemand(shape("m5.large", 2, 29)), onDemand(shape("c5.large", 2, 29)), onDemand(shape("m5.xlarge", 4, 58))}
	for _, family := range []string{awsv1.AMIFamilyAL2023, awsv1.AMIFamilyAL2, awsv1.AMIFamilyBottlerocket} {
		t.Run(family, func(t *testing.T) {
			p, api, class := launchClass(t, family, nil)
			in, _, _, err := p.fleet(context.Background(), launchClaim, class, v1.CapacityTypeOnDemand, cands)
			if err != nil {
				t.Fatal(err)
			}
			// The pod limit each template's user data passes, by the
			// types its overrides launch.
			podsOf := map[string]string{}
			for _, lt := range api.created {
				raw, err := base64.StdEncoding.DecodeString(awssdk.ToString(lt.LaunchTemplateData.UserData))
				if err != nil {
					t.Fatal(err)
				}
				ud := string(raw)
				for _, pods := range []string{"29", "58"} {
					for _, form := range []string{"maxPods: " + pods + "\n", "--max-pods=" + pods + "'", "max-pods = " + pods + "\n"} {
						if strings.Contains(ud, form) {
							podsOf[awssdk.ToString(lt.LaunchTemplateName)] = pods
						}
					}
				}
			}
			got := map[string]string{}
			for _, cfg := range in.LaunchTemplateConfigs {
				for _, o := range cfg.Overrides {
					got[string(o.InstanceType)] = podsOf[awssdk.ToString(cfg.LaunchTemplateSpecification.LaunchTemplateName)]
				}
			}
			if diff := cmp.Diff(map[string]string{"m5.large": "29", "c5.large": "29", "m5.xlarge": "58"}, got); diff != "" {
				t.Errorf("maxPods in each type's user data (-want +got):\n%s", diff)
			}
			if len(api.created) != 2 {
				t.Errorf("%d launch templates, want one per pod limit (2)", len(api.created))
			}
		})
	}
}
