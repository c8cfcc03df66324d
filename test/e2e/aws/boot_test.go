//go:build e2e

package aws

import (
	"context"
	"strings"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// labelHypervisor is the reference's well-known label of an instance
// type's hypervisor.
const labelHypervisor = "karpenter.k8s.aws/instance-hypervisor"

// A NodePool requiring instance-hypervisor In [nitro] over two Xen types
// (m4, cheaper) and a Nitro one launches only the Nitro one: the
// requirement filters instance types rather than being stamped on
// whatever node is cheapest.
func TestHypervisorRequirement(t *testing.T) {
	t.Parallel()
	s := start(t, setup{instanceTypes: []string{"m4.large", "m4.xlarge", "r5.xlarge"}, capacityTypes: []string{v1.CapacityTypeOnDemand},
		requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: labelHypervisor, Operator: corev1.NodeSelectorOpIn, Values: []string{"nitro"}}}})
	s.ready()
	s.spreadOut(2)
	var ids []string
	for _, nc := range s.settled(2) {
		s.g.Expect(nc.Labels).To(gomega.HaveKeyWithValue(corev1.LabelInstanceTypeStable, "r5.xlarge"), "nodeclaim %s", nc.Name)
		n := node(nc.Status.NodeName)
		s.g.Expect(n).NotTo(gomega.BeNil())
		s.g.Expect(n.Labels).To(gomega.HaveKeyWithValue(labelHypervisor, "nitro"), "node %s", n.Name)
		ids = append(ids, instanceID(nc.Status.ProviderID))
	}
	for id, inst := range instances(s.g, ids...) {
		out, err := api.DescribeInstanceTypes(context.Background(), &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{inst.InstanceType}})
		s.g.Expect(err).NotTo(gomega.HaveOccurred())
		s.g.Expect(out.InstanceTypes).To(gomega.HaveLen(1))
		s.g.Expect(out.InstanceTypes[0].Hypervisor).To(gomega.Equal(ec2types.InstanceTypeHypervisorNitro), "instance %s (%s)", id, inst.InstanceType)
	}
}

// A pod requesting aws.amazon.com/neuron, in a NodePool open to every
// type, gets an Inferentia or Trainium node, whose Neuron device plugin
// advertises the devices the pod is bound to.
func TestNeuronPod(t *testing.T) {
	t.Parallel()
	s := start(t, setup{capacityTypes: []string{v1.CapacityTypeOnDemand}})
	s.ready()
	s.spreadOutWith(1, corev1.ResourceList{"aws.amazon.com/neuron": resource.MustParse("1")})
	claims := s.settled(1)
	family := claims[0].Labels[v1.LabelInstanceFamily]
	s.g.Expect(strings.HasPrefix(family, "inf") || strings.HasPrefix(family, "trn")).To(gomega.BeTrue(), "instance family %s", family)
	n := node(claims[0].Status.NodeName)
	s.g.Expect(n).NotTo(gomega.BeNil())
	neuron := n.Status.Allocatable["aws.amazon.com/neuron"]
	s.g.Expect(neuron.Value()).To(gomega.BeNumerically(">=", 1), "node %s allocatable %v", n.Name, n.Status.Allocatable)
}

// A pod requesting 50Gi of ephemeral storage gets a node when its
// NodeClass's root volume is 100Gi (the default 20Gi would not hold it):
// the launch template the endpoint received maps that volume, and the
// node's kubelet reports it.
func TestEphemeralStorageFromRootVolume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, setup{instanceTypes: []string{"m6i.xlarge"}, capacityTypes: []string{v1.CapacityTypeOnDemand},
		class: func(c *awsv1.EC2NodeClass) {
			c.Spec.BlockDeviceMappings = []awsv1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/xvda"), RootVolume: true, EBS: &awsv1.BlockDevice{
				VolumeSize: ptr.To(resource.MustParse("100Gi")), VolumeType: ptr.To("gp3"), Encrypted: ptr.To(true),
			}}}
		}})
	s.ready()
	s.spreadOutWith(1, corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("50Gi")})
	claims := s.settled(1)
	n := node(claims[0].Status.NodeName)
	s.g.Expect(n).NotTo(gomega.BeNil())
	storage := n.Status.Capacity[corev1.ResourceEphemeralStorage]
	s.g.Expect(storage.Cmp(resource.MustParse("100Gi"))).To(gomega.Equal(0), "node %s ephemeral storage %s", n.Name, storage.String())
	templates, err := api.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{
		{Name: awssdk.String("tag:" + v1.NodePoolLabelKey), Values: []string{s.np.Name}},
	}})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.g.Expect(templates.LaunchTemplates).NotTo(gomega.BeEmpty())
	for _, lt := range templates.LaunchTemplates {
		versions, err := api.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: lt.LaunchTemplateId, Versions: []string{"$Latest"}})
		s.g.Expect(err).NotTo(gomega.HaveOccurred())
		s.g.Expect(versions.LaunchTemplateVersions).To(gomega.HaveLen(1))
		bdm := versions.LaunchTemplateVersions[0].LaunchTemplateData.BlockDeviceMappings
		s.g.Expect(bdm).To(gomega.HaveLen(1), "launch template %s", awssdk.ToString(lt.LaunchTemplateName))
		s.g.Expect(awssdk.ToString(bdm[0].DeviceName)).To(gomega.Equal("/dev/xvda"))
		s.g.Expect(awssdk.ToInt32(bdm[0].Ebs.VolumeSize)).To(gomega.Equal(int32(100)))
		s.g.Expect(bdm[0].Ebs.VolumeType).To(gomega.Equal(ec2types.VolumeTypeGp3))
		s.g.Expect(awssdk.ToBool(bdm[0].Ebs.Encrypted)).To(gomega.BeTrue())
	}
}
