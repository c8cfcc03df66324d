//go:build e2e

package aws

import (
	"context"
	"strconv"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// spotCap is below every r6i.large spot price the endpoint serves.
const spotCap = 0.01

// An EC2NodeClass whose spot max price annotation is below r6i.large's
// spot price in every zone: the NodePool allows spot and on-demand, and
// both pods get on-demand nodes; no spot instance ever runs, and every
// instance of the NodePool belongs to one of its NodeClaims.
func TestSpotMaxPriceBelowTheSpotPrice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, setup{instanceTypes: []string{"r6i.large"}, capacityTypes: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}})
	prices, err := api.DescribeSpotPriceHistory(ctx, &ec2.DescribeSpotPriceHistoryInput{InstanceTypes: []ec2types.InstanceType{"r6i.large"}})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.g.Expect(prices.SpotPriceHistory).NotTo(gomega.BeEmpty())
	for _, p := range prices.SpotPriceHistory {
		price, err := strconv.ParseFloat(awssdk.ToString(p.SpotPrice), 64)
		s.g.Expect(err).NotTo(gomega.HaveOccurred())
		s.g.Expect(price).To(gomega.BeNumerically(">", spotCap), "the spot price in %s", awssdk.ToString(p.AvailabilityZone))
	}
	class := &awsv1.EC2NodeClass{}
	s.g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(s.class), class)).To(gomega.Succeed())
	patch := client.MergeFrom(class.DeepCopy())
	class.Annotations = map[string]string{awsv1.SpotMaxPriceAnnotationKey: strconv.FormatFloat(spotCap, 'f', -1, 64)}
	s.g.Expect(cluster.Client.Patch(ctx, class, patch)).To(gomega.Succeed())
	s.ready()
	s.spreadOut(2)
	claims := s.settled(2)
	s.g.Expect(launchedBy(claims)).To(gomega.Equal(map[string]int{"on-demand/": 2}))
	owned := map[string]bool{}
	for _, nc := range claims {
		owned[instanceID(nc.Status.ProviderID)] = true
	}
	all, err := allInstances(ctx)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, inst := range all {
		if tagsOf(inst)[v1.NodePoolLabelKey] != s.np.Name {
			continue
		}
		id := awssdk.ToString(inst.InstanceId)
		s.g.Expect(inst.InstanceLifecycle).NotTo(gomega.Equal(ec2types.InstanceLifecycleTypeSpot), "instance %s", id)
		if state(inst) != ec2types.InstanceStateNameTerminated {
			s.g.Expect(owned).To(gomega.HaveKey(id), "instance %s runs for no NodeClaim", id)
		}
	}
}
