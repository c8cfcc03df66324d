//go:build e2e

package aws

import (
	"context"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// The profile's us-west-2d subnets: the first (three free addresses)
// then the second (two), as the EC2NodeClass's status orders them.
const (
	fullSubnetFirst  = "subnet-00000000000000004"
	fullSubnetSecond = "subnet-00000000000000005"
)

// A zone whose first subnet fills up launches in its second: four pods
// that each need a node, in a zone of two subnets with three and two
// free addresses, all run, on instances in both subnets, and no
// instance runs without its NodeClaim. Launching every node into the
// first subnet, as one subnet per zone did, leaves the fourth refused
// with InsufficientFreeAddressesInSubnet.
func TestFullSubnetLaunchesInTheNext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, setup{instanceTypes: []string{"r6i.large"}, capacityTypes: []string{v1.CapacityTypeOnDemand}})
	class := &awsv1.EC2NodeClass{}
	s.g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(s.class), class)).To(gomega.Succeed())
	patch := client.MergeFrom(class.DeepCopy())
	class.Spec.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"e2e": "full-subnet"}}}
	s.g.Expect(cluster.Client.Patch(ctx, class, patch)).To(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) {
		got := s.ready()
		var ids []string
		for _, sn := range got.Status.Subnets {
			ids = append(ids, sn.ID)
		}
		g.Expect(ids).To(gomega.Equal([]string{fullSubnetFirst, fullSubnetSecond}))
	}).Should(gomega.Succeed())

	const replicas = 4
	s.spreadOut(replicas)
	claims := s.settled(replicas)
	var ids []string
	for _, nc := range claims {
		ids = append(ids, instanceID(nc.Status.ProviderID))
	}
	inSubnet := map[string]int{}
	for _, inst := range instances(s.g, ids...) {
		s.g.Expect(state(inst)).To(gomega.Equal(ec2types.InstanceStateNameRunning))
		inSubnet[awssdk.ToString(inst.SubnetId)]++
	}
	s.g.Expect(inSubnet).To(gomega.Equal(map[string]int{fullSubnetFirst: 2, fullSubnetSecond: 2}))
	// No instance of the NodePool runs but the NodeClaims'.
	all, err := allInstances(ctx)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	var live []string
	for _, inst := range all {
		if tagsOf(inst)[v1.NodePoolLabelKey] == s.np.Name && state(inst) != ec2types.InstanceStateNameTerminated {
			live = append(live, awssdk.ToString(inst.InstanceId))
		}
	}
	s.g.Expect(live).To(gomega.ConsistOf(ids))
}
