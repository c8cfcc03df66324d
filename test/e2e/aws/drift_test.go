//go:build e2e

package aws

import (
	"context"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	awscloud "github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/invariants"
)

// driftTimeout bounds a drift's replacement of every node: the class's
// refresh (10 s), the drift check, then per node a replacement's launch
// and registration, the disruption's validation and a drain.
const driftTimeout = 150 * time.Second

// driftReplaces runs replicas pods on nodes of their own, then makes the
// change (to the EC2NodeClass or the cloud) and waits until every node
// has been replaced, each drifted for reason and pre-spun: a replacement
// was initialized before the node began to drain. It returns the
// NodeClaims before and after.
func (s *scenario) driftReplaces(replicas int, reason cloudprovider.DriftReason, change func()) (before, after []v1.NodeClaim) {
	s.t.Helper()
	s.ready()
	s.spreadOut(int32(replicas))
	before = s.settled(replicas)
	old := map[string]bool{}
	for _, nc := range before {
		old[nc.Name] = true
	}
	change()
	s.g.Eventually(func(g gomega.Gomega) {
		claims := s.claims()
		g.Expect(claims).To(gomega.HaveLen(replicas))
		for _, nc := range claims {
			g.Expect(old).NotTo(gomega.HaveKey(nc.Name), "nodeclaim %s is still there", nc.Name)
		}
	}).WithTimeout(driftTimeout).Should(gomega.Succeed())
	after = s.settled(replicas)
	initialized, deleting := map[string]time.Time{}, map[string]time.Time{}
	for _, e := range s.guard.History() {
		switch {
		case e.Kind == invariants.Initialized && !old[e.Name]:
			initialized[e.Name] = e.At
		case e.Kind == invariants.Deleting && old[e.Name]:
			deleting[e.Name] = e.At
		}
	}
	for _, nc := range before {
		last := s.guard.Last(nc.Name)
		s.g.Expect(last).NotTo(gomega.BeNil())
		drifted := meta.FindStatusCondition(last.Status.Conditions, v1.ConditionTypeDrifted)
		s.g.Expect(drifted).NotTo(gomega.BeNil(), "nodeclaim %s was replaced without drifting", nc.Name)
		s.g.Expect(drifted.Reason).To(gomega.Equal(string(reason)), "nodeclaim %s", nc.Name)
		at, ok := deleting[nc.Name]
		s.g.Expect(ok).To(gomega.BeTrue(), "nodeclaim %s's deletion was not seen", nc.Name)
		spun := false
		for _, t := range initialized {
			spun = spun || !t.After(at)
		}
		s.g.Expect(spun).To(gomega.BeTrue(), "nodeclaim %s began to drain at %s before any replacement was initialized (%v)", nc.Name, at, initialized)
	}
	return before, after
}

// editClass changes the EC2NodeClass's spec.
func (s *scenario) editClass(change func(*awsv1.EC2NodeClass)) {
	s.t.Helper()
	got := &awsv1.EC2NodeClass{}
	s.g.Expect(cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(s.class), got)).To(gomega.Succeed())
	patch := client.MergeFrom(got.DeepCopy())
	change(got)
	s.g.Expect(cluster.Client.Patch(context.Background(), got, patch)).To(gomega.Succeed())
}

// instancesOf describes the NodeClaims' instances, by id.
func instancesOf(g gomega.Gomega, claims []v1.NodeClaim) map[string]ec2types.Instance {
	var ids []string
	for _, nc := range claims {
		ids = append(ids, instanceID(nc.Status.ProviderID))
	}
	return instances(g, ids...)
}

// copyImage makes an AMI of the account's named name from an EKS AL2023
// x86_64 image, as a team publishing its own node image does.
func copyImage(g gomega.Gomega, name string) string {
	ctx := context.Background()
	src, err := api.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []ec2types.Filter{{Name: awssdk.String("name"), Values: []string{"amazon-eks-node-al2023-x86_64-standard-*"}}}})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(src.Images).NotTo(gomega.BeEmpty())
	out, err := api.CopyImage(ctx, &ec2.CopyImageInput{SourceImageId: src.Images[0].ImageId, SourceRegion: awssdk.String(region), Name: awssdk.String(name)})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return awssdk.ToString(out.ImageId)
}

// A new image matching the EC2NodeClass's selector drifts every node,
// each replaced by a node on the new image before it drains.
func TestDriftNewImage(t *testing.T) {
	t.Parallel()
	var first string
	s := start(t, setup{instanceTypes: []string{"m6i.large"}, capacityTypes: []string{v1.CapacityTypeOnDemand}, class: func(c *awsv1.EC2NodeClass) {
		first = copyImage(test.NewGomega(t), c.Name+"-v1")
		c.Spec.AMIFamily = ptr.To(awsv1.AMIFamilyAL2023)
		c.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Name: c.Name + "-*", Owner: "self"}}
	}})
	var second string
	before, after := s.driftReplaces(2, awscloud.DriftAMI, func() { second = copyImage(s.g, s.class.Name+"-v2") })
	for id, inst := range instancesOf(s.g, before) {
		s.g.Expect(awssdk.ToString(inst.ImageId)).To(gomega.Equal(first), "instance %s", id)
	}
	for id, inst := range instancesOf(s.g, after) {
		s.g.Expect(awssdk.ToString(inst.ImageId)).To(gomega.Equal(second), "instance %s", id)
	}
}

// A subnet dropped from the EC2NodeClass's selector drifts the nodes in
// it; their replacements run in the subnets still selected.
func TestDriftSubnetDeselected(t *testing.T) {
	t.Parallel()
	s := start(t, setup{instanceTypes: []string{"m6i.large"}, capacityTypes: []string{v1.CapacityTypeOnDemand}})
	var kept []string
	_, after := s.driftReplaces(1, awscloud.DriftSubnet, func() {
		s.editClass(func(c *awsv1.EC2NodeClass) {
			used := map[string]bool{}
			for _, inst := range instancesOf(s.g, s.claims()) {
				used[awssdk.ToString(inst.SubnetId)] = true
			}
			c.Spec.SubnetSelectorTerms = nil
			for _, sn := range c.Status.Subnets {
				if !used[sn.ID] {
					kept = append(kept, sn.ID)
					c.Spec.SubnetSelectorTerms = append(c.Spec.SubnetSelectorTerms, awsv1.SubnetSelectorTerm{ID: sn.ID})
				}
			}
		})
	})
	for id, inst := range instancesOf(s.g, after) {
		s.g.Expect(kept).To(gomega.ContainElement(awssdk.ToString(inst.SubnetId)), "instance %s", id)
	}
}

// A security group dropped from the EC2NodeClass's selector drifts every
// node; the replacements run with the groups still selected.
func TestDriftSecurityGroupChanged(t *testing.T) {
	t.Parallel()
	s := start(t, setup{instanceTypes: []string{"m6i.large"}, capacityTypes: []string{v1.CapacityTypeOnDemand}})
	keep := securityGroups[0]
	_, after := s.driftReplaces(1, awscloud.DriftSecurityGroup, func() {
		s.editClass(func(c *awsv1.EC2NodeClass) {
			c.Spec.SecurityGroupSelectorTerms = []awsv1.SecurityGroupSelectorTerm{{ID: keep}}
		})
	})
	for id, inst := range instancesOf(s.g, after) {
		var groups []string
		for _, g := range inst.SecurityGroups {
			groups = append(groups, awssdk.ToString(g.GroupId))
		}
		s.g.Expect(groups).To(gomega.Equal([]string{keep}), "instance %s", id)
	}
}

// An edit of the EC2NodeClass's static fields (its tags) drifts every
// node by the class's hash; the replacements carry the new tags.
func TestDriftNodeClassEdited(t *testing.T) {
	t.Parallel()
	s := start(t, setup{instanceTypes: []string{"m6i.large"}, capacityTypes: []string{v1.CapacityTypeOnDemand}})
	_, after := s.driftReplaces(1, awscloud.DriftNodeClass, func() {
		s.editClass(func(c *awsv1.EC2NodeClass) { c.Spec.Tags = map[string]string{"team": "e2e", "edited": "yes"} })
	})
	for id, inst := range instancesOf(s.g, after) {
		s.g.Expect(tagsOf(inst)).To(gomega.HaveKeyWithValue("edited", "yes"), "instance %s", id)
	}
}
