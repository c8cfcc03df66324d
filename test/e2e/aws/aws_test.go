//go:build e2e

package aws

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The endpoint's synthesized network: one subnet per zone of the profile,
// in its order, and two security groups, all tagged for the cluster's
// discovery.
var (
	subnets        = map[string]string{"us-west-2a": "subnet-00000000000000001", "us-west-2b": "subnet-00000000000000002", "us-west-2c": "subnet-00000000000000003"}
	securityGroups = []string{"sg-00000000000000001", "sg-00000000000000002"}
)

// An EC2NodeClass in the reference's shape resolves the endpoint's
// subnets, security groups and AL2023 images; three pods that each need a
// node get exactly three NodeClaims, whose instances run in EC2 tagged
// for the cluster and the NodeClaim, whose Nodes carry EC2's labels and
// the real kube-scheduler binds the pods to. Scaled to zero with
// consolidation on, the empty nodes go and their instances are
// terminated.
func TestProvisionThenEmpty(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, setup{instanceTypes: []string{"m6i.large"}, capacityTypes: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}})
	class := s.ready()
	var gotSubnets []string
	for _, sn := range class.Status.Subnets {
		s.g.Expect(subnets).To(gomega.HaveKeyWithValue(sn.Zone, sn.ID))
		gotSubnets = append(gotSubnets, sn.ID)
	}
	s.g.Expect(gotSubnets).To(gomega.ConsistOf(subnets["us-west-2a"], subnets["us-west-2b"], subnets["us-west-2c"]))
	var gotGroups []string
	for _, sg := range class.Status.SecurityGroups {
		gotGroups = append(gotGroups, sg.ID)
	}
	s.g.Expect(gotGroups).To(gomega.ConsistOf(securityGroups))
	s.g.Expect(class.Status.AMIs).NotTo(gomega.BeEmpty())
	var images []string
	for _, ami := range class.Status.AMIs {
		s.g.Expect(ami.ID).To(gomega.HavePrefix("ami-"))
		s.g.Expect(ami.Name).To(gomega.HavePrefix("amazon-eks-node-al2023-"), "alias al2023@latest picked %s", ami.Name)
		images = append(images, ami.ID)
	}
	s.g.Expect(class.Status.InstanceProfile).To(gomega.Equal("KarpenterNodeInstanceProfile-" + clusterName))

	const replicas = 3
	deploy := s.spreadOut(replicas)
	claims := s.settled(replicas)
	zones := zoneIDs(s.g)
	var ids []string
	for _, nc := range claims {
		ct := nc.Labels[v1.CapacityTypeLabelKey]
		s.g.Expect(ct).To(gomega.BeElementOf(v1.CapacityTypeSpot, v1.CapacityTypeOnDemand), "nodeclaim %s", nc.Name)
		n := node(nc.Status.NodeName)
		s.g.Expect(n).NotTo(gomega.BeNil(), "nodeclaim %s's node %s", nc.Name, nc.Status.NodeName)
		s.g.Expect(n.Spec.ProviderID).To(gomega.Equal(nc.Status.ProviderID))
		s.g.Expect(n.Spec.ProviderID).To(gomega.MatchRegexp(`^aws:///us-west-2[abc]/i-[0-9a-f]+$`))
		zone := n.Labels[corev1.LabelTopologyZone]
		s.g.Expect(n.Labels).To(gomega.And(
			gomega.HaveKeyWithValue(corev1.LabelInstanceTypeStable, "m6i.large"),
			gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, ct),
			gomega.HaveKeyWithValue(corev1.LabelTopologyRegion, region),
			gomega.HaveKeyWithValue(v1.LabelZoneID, zones[zone]),
			gomega.HaveKeyWithValue(v1.NodePoolLabelKey, s.np.Name),
		), "node %s", n.Name)
		s.g.Expect(zones).To(gomega.HaveKey(zone), "node %s's zone", n.Name)
		s.g.Expect(n.Spec.ProviderID).To(gomega.HavePrefix("aws:///" + zone + "/"))
		ids = append(ids, instanceID(nc.Status.ProviderID))
	}
	for id, inst := range instances(s.g, ids...) {
		s.g.Expect(state(inst)).To(gomega.Equal(ec2types.InstanceStateNameRunning), "instance %s", id)
		s.g.Expect(string(inst.InstanceType)).To(gomega.Equal("m6i.large"))
		s.g.Expect(images).To(gomega.ContainElement(awssdk.ToString(inst.ImageId)), "instance %s's image", id)
		s.g.Expect(subnets).To(gomega.ContainElement(awssdk.ToString(inst.SubnetId)), "instance %s's subnet", id)
		s.g.Expect(tagsOf(inst)).To(gomega.And(
			gomega.HaveKeyWithValue("kubernetes.io/cluster/"+clusterName, "owned"),
			gomega.HaveKeyWithValue(v1.NodePoolLabelKey, s.np.Name),
			gomega.HaveKey("karpenter.sh/nodeclaim"),
			gomega.HaveKeyWithValue("karpenter.k8s.aws/ec2nodeclass", s.class.Name),
			gomega.HaveKeyWithValue("team", "e2e"), // the EC2NodeClass's tags
		), "instance %s", id)
	}
	s.g.Expect(instances(s.g, ids...)).To(gomega.HaveLen(replicas))

	// Scale to zero and let consolidation remove the empty nodes.
	patch := client.MergeFrom(deploy.DeepCopy())
	deploy.Spec.Replicas = ptr.To[int32](0)
	s.g.Expect(cluster.Client.Patch(ctx, deploy, patch)).To(gomega.Succeed())
	np := &v1.NodePool{}
	s.g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(s.np), np)).To(gomega.Succeed())
	patch = client.MergeFrom(np.DeepCopy())
	np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("0s")
	s.g.Expect(cluster.Client.Patch(ctx, np, patch)).To(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.claims()).To(gomega.BeEmpty())
		g.Expect(nodesOf(g, ids...)).To(gomega.BeEmpty())
		for id, inst := range instances(g, ids...) {
			g.Expect(state(inst)).To(gomega.Equal(ec2types.InstanceStateNameTerminated), "instance %s", id)
		}
		// The default budget (10%) empties one node per command, and the
		// disruption controller runs one command at a time cluster-wide:
		// the drift scenarios running beside this one take their turns
		// (each waits for its pre-spun replacement) in between.
	}).WithTimeout(3 * time.Minute).Should(gomega.Succeed())
	for _, nc := range claims {
		last := s.guard.Last(nc.Name)
		s.g.Expect(last).NotTo(gomega.BeNil())
		reason := meta.FindStatusCondition(last.Status.Conditions, v1.ConditionTypeDisruptionReason)
		s.g.Expect(reason).NotTo(gomega.BeNil(), "nodeclaim %s was deleted without a disruption reason", nc.Name)
		s.g.Expect(reason.Reason).To(gomega.Equal(string(v1.DisruptionReasonEmpty)), "nodeclaim %s", nc.Name)
	}
}

// No spot c5.xlarge anywhere: each spot fleet fails with
// InsufficientInstanceCapacity, and the NodeClaims fall back to on-demand;
// only the two the pods need remain, and no spot instance ever ran.
func TestSpotFallsBackToOnDemand(t *testing.T) {
	t.Parallel()
	s := start(t, setup{instanceTypes: []string{"c5.xlarge"}, capacityTypes: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}})
	s.ready()
	s.spreadOut(2)
	claims := s.settled(2)
	s.g.Expect(launchedBy(claims)).To(gomega.Equal(map[string]int{"on-demand/": 2}))
	// Every spot offering tried is named with its code (seed 003), so
	// all are marked at once and the next plan goes on-demand.
	s.g.Eventually(func(g gomega.Gomega) {
		failures := strings.Join(s.launchFailures(g), "\n")
		for _, zone := range []string{"us-west-2a", "us-west-2b", "us-west-2c"} {
			g.Expect(failures).To(gomega.ContainSubstring("spot/c5.xlarge/"+zone+" (InsufficientInstanceCapacity)"), "the failed launches do not name spot in %s", zone)
		}
	}).Should(gomega.Succeed())
	all, err := allInstances(context.Background())
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, inst := range all {
		if tagsOf(inst)[v1.NodePoolLabelKey] == s.np.Name {
			s.g.Expect(inst.InstanceLifecycle).NotTo(gomega.Equal(ec2types.InstanceLifecycleTypeSpot), "instance %s", awssdk.ToString(inst.InstanceId))
		}
	}
}

// A two-slot targeted reservation selected by id: the EC2NodeClass lists
// it, two of three pods get reserved nodes in its zone (labelled with its
// id), the third on-demand, and never more than two of the NodePool's
// instances run in it at once.
func TestReservationFilledFirst(t *testing.T) {
	t.Parallel()
	const id = "cr-0e2e0000000000001"
	s := start(t, setup{instanceTypes: []string{"m5.large"}, capacityTypes: []string{v1.CapacityTypeReserved, v1.CapacityTypeOnDemand},
		reservations: []string{id}, slots: map[string]int{id: 2}})
	most := test.Peak(t, func(ctx context.Context) int {
		all, err := allInstances(ctx)
		if err != nil {
			return 0
		}
		n := 0
		for _, inst := range all {
			if awssdk.ToString(inst.CapacityReservationId) == id && state(inst) != ec2types.InstanceStateNameTerminated && state(inst) != ec2types.InstanceStateNameShuttingDown {
				n++
			}
		}
		return n
	})
	class := s.ready()
	s.g.Expect(class.Status.CapacityReservations).To(gomega.ContainElement(gomega.And(
		gomega.HaveField("ID", id), gomega.HaveField("InstanceType", "m5.large"), gomega.HaveField("AvailabilityZone", "us-west-2b"))))
	s.spreadOut(3)
	claims := s.settled(3)
	s.g.Expect(launchedBy(claims)).To(gomega.Equal(map[string]int{"reserved/" + id: 2, "on-demand/": 1}))
	var reserved []string
	for _, nc := range claims {
		if nc.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeReserved {
			continue
		}
		n := node(nc.Status.NodeName)
		s.g.Expect(n).NotTo(gomega.BeNil())
		s.g.Expect(n.Labels).To(gomega.And(
			gomega.HaveKeyWithValue(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved),
			gomega.HaveKeyWithValue(v1.LabelCapacityReservationID, id),
			gomega.HaveKeyWithValue(corev1.LabelTopologyZone, "us-west-2b")), "node %s", n.Name)
		reserved = append(reserved, instanceID(nc.Status.ProviderID))
	}
	for iid, inst := range instances(s.g, reserved...) {
		s.g.Expect(awssdk.ToString(inst.CapacityReservationId)).To(gomega.Equal(id), "instance %s", iid)
	}
	out, err := api.DescribeCapacityReservations(context.Background(), &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{id}})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.g.Expect(out.CapacityReservations).To(gomega.HaveLen(1))
	s.g.Expect(awssdk.ToInt32(out.CapacityReservations[0].AvailableInstanceCount)).To(gomega.BeZero())
	if got := most.Load(); got > 2 {
		t.Errorf("%d instances in %s at one moment; it has 2 slots", got, id)
	}
}

// An instance launched straight through CreateFleet with the cluster's
// tags and a NodePool's, but no NodeClaim, is terminated by garbage
// collection once older than --gc-grace; one tagged for another cluster
// is left alone.
func TestLeakedInstanceIsCollected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, setup{instanceTypes: []string{"t3.large"}, capacityTypes: []string{v1.CapacityTypeOnDemand}})
	class := s.ready()
	ami := ""
	for _, a := range class.Status.AMIs {
		if strings.Contains(a.Name, "-x86_64-standard-") {
			ami = a.ID
		}
	}
	s.g.Expect(ami).NotTo(gomega.BeEmpty(), "no x86_64 standard AL2023 image in %v", class.Status.AMIs)
	launch := func(cluster string) string {
		tags := []ec2types.Tag{
			{Key: awssdk.String("kubernetes.io/cluster/" + cluster), Value: awssdk.String("owned")},
			{Key: awssdk.String(v1.NodePoolLabelKey), Value: awssdk.String(s.np.Name)},
		}
		ids := s.launchOutside(ami, ec2types.InstanceTypeT3Large, subnets["us-west-2a"], ec2types.DefaultTargetCapacityTypeOnDemand, 1, tags)
		s.g.Expect(ids).To(gomega.HaveLen(1))
		return ids[0]
	}
	leaked, foreign := launch(clusterName), launch("someone-else")
	t.Cleanup(func() {
		// The foreign instance is no one's to collect; nor is either's
		// Node (the controller terminates instances, the kubelet of a
		// terminated instance is gone, but no one deletes its Node here).
		_, _ = api.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{foreign}})
		g := gomega.NewWithT(t)
		for _, n := range nodesOf(g, leaked, foreign) {
			_ = cluster.Client.Delete(ctx, &n)
		}
	})
	// Age is counted from the instance's LaunchTime, as garbage
	// collection counts it, not from when CreateFleet answered: fleets
	// are placed one at a time and other scenarios' fleets may hold the
	// second launch up past the grace.
	launched := awssdk.ToTime(instances(s.g, leaked)[leaked].LaunchTime)
	s.g.Expect(launched).NotTo(gomega.BeZero(), "leaked instance %s has no launch time", leaked)
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(state(instances(g, leaked)[leaked])).To(gomega.Equal(ec2types.InstanceStateNameTerminated), "leaked instance %s", leaked)
	}).WithTimeout(gcGrace + 2*gcInterval + 20*time.Second).Should(gomega.Succeed())
	// Seen terminated no sooner than it was: took is never short.
	took := time.Since(launched)
	if took < gcGrace {
		t.Errorf("leaked instance %s terminated %s after its launch, within --gc-grace %s", leaked, took.Round(time.Second), gcGrace)
	}
	t.Logf("leaked instance %s terminated %s after its launch (grace %s, interval %s)", leaked, took.Round(time.Second), gcGrace, gcInterval)
	s.g.Expect(state(instances(s.g, foreign)[foreign])).To(gomega.Equal(ec2types.InstanceStateNameRunning), "another cluster's instance %s", foreign)
	s.g.Expect(s.claims()).To(gomega.BeEmpty())
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(nodesOf(g, leaked)).To(gomega.BeEmpty(), "the leaked instance's Node")
	}).WithTimeout(gcInterval + 20*time.Second).Should(gomega.Succeed())
}

// testdata/ec2nodeclass.yaml with a role, the shape Karpenter's docs use
// (role, alias al2023@latest, discovery tags), becomes Ready with the
// instance profile Capstan made for the role, the endpoint's subnets and
// security groups and the newest AL2023 images for the cluster's
// Kubernetes minor, one per architecture and variant (neuron for x86_64
// only).
func TestReferenceEC2NodeClass(t *testing.T) {
	t.Parallel()
	if !aliasResolves() {
		t.Skipf("the cluster reports Kubernetes %q (an unstamped kube-apiserver build, see hack/tools.sh): "+
			"alias al2023@latest resolves to no image; the other scenarios select the same images by name", kubernetesVersion)
	}
	ctx := context.Background()
	g := test.NewGomega(t)
	data, err := os.ReadFile("testdata/ec2nodeclass.yaml")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	class := &awsv1.EC2NodeClass{}
	g.Expect(yaml.UnmarshalStrict([]byte(strings.ReplaceAll(string(data), "CLUSTER", clusterName)), class)).To(gomega.Succeed())
	class.Name = test.RandomName("reference")
	// The docs' usual shape names a role: Capstan makes its instance
	// profile through IAM.
	class.Spec.InstanceProfile, class.Spec.Role = nil, "KarpenterNodeRole-"+clusterName
	g.Expect(cluster.Client.Create(ctx, class)).To(gomega.Succeed())
	t.Cleanup(func() { _ = cluster.Client.Delete(ctx, class) })
	s := &scenario{t: t, g: g, class: class}
	got := s.ready()
	var names, subnetIDs, groups []string
	for _, a := range got.Status.AMIs {
		names = append(names, a.Name)
	}
	for _, sn := range got.Status.Subnets {
		subnetIDs = append(subnetIDs, sn.ID)
	}
	for _, sg := range got.Status.SecurityGroups {
		groups = append(groups, sg.ID)
	}
	g.Expect(names).To(gomega.ConsistOf(
		"amazon-eks-node-al2023-x86_64-standard-1.37-v20250610", "amazon-eks-node-al2023-x86_64-nvidia-1.37-v20250610",
		"amazon-eks-node-al2023-arm64-standard-1.37-v20250610", "amazon-eks-node-al2023-arm64-nvidia-1.37-v20250610",
		"amazon-eks-node-al2023-x86_64-neuron-1.37-v20250610"))
	g.Expect(subnetIDs).To(gomega.ConsistOf(subnets["us-west-2a"], subnets["us-west-2b"], subnets["us-west-2c"]))
	g.Expect(groups).To(gomega.ConsistOf(securityGroups))
	g.Expect(got.Status.InstanceProfile).To(gomega.HavePrefix(clusterName+"_"), "the instance profile Capstan made for the role")
}

// A spot interruption warning EventBridge delivers to the interruption
// queue (sent here as EC2 would) makes Capstan replace the node before
// its two minutes run out: a new NodeClaim, the pod running again on it,
// and the interrupted NodeClaim and its instance gone.
func TestInterruption(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, setup{instanceTypes: []string{"r5.large"}, capacityTypes: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}})
	s.ready()
	s.spreadOut(1)
	claims := s.settled(1)
	interrupted := claims[0]
	id := instanceID(interrupted.Status.ProviderID)
	queue, err := events.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: awssdk.String(clusterName)})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	warning := fmt.Sprintf(`{"version":"0","id":"e2e","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","account":"111122223333",`+
		`"time":%q,"region":%q,"resources":["arn:aws:ec2:%s:111122223333:instance/%s"],"detail":{"instance-id":%q,"instance-action":"terminate"}}`,
		time.Now().UTC().Format(time.RFC3339), region, region, id, id)
	_, err = events.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: queue.QueueUrl, MessageBody: awssdk.String(warning)})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	s.g.Eventually(func(g gomega.Gomega) {
		claims := s.claims()
		g.Expect(claims).To(gomega.HaveLen(1))
		g.Expect(claims[0].Name).NotTo(gomega.Equal(interrupted.Name))
		pods := s.running()
		g.Expect(pods).To(gomega.HaveLen(1))
		g.Expect(pods[0].Spec.NodeName).To(gomega.Equal(claims[0].Status.NodeName))
		for _, inst := range instances(g, id) {
			g.Expect(state(inst)).To(gomega.Equal(ec2types.InstanceStateNameTerminated))
		}
	}).WithTimeout(90 * time.Second).Should(gomega.Succeed())
	last := s.guard.Last(interrupted.Name)
	s.g.Expect(last).NotTo(gomega.BeNil())
	reason := meta.FindStatusCondition(last.Status.Conditions, v1.ConditionTypeDisruptionReason)
	s.g.Expect(reason).NotTo(gomega.BeNil(), "the interrupted NodeClaim was deleted without a disruption reason")
}

// A NodeClass whose subnets cannot be resolved is not Ready and says why;
// its NodePool is not Ready either, and nothing is launched for its pods.
func TestUnresolvableSubnets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, setup{instanceTypes: []string{"m6i.2xlarge"}, capacityTypes: []string{v1.CapacityTypeOnDemand}})
	class := &awsv1.EC2NodeClass{}
	s.g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(s.class), class)).To(gomega.Succeed())
	patch := client.MergeFrom(class.DeepCopy())
	class.Spec.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "no-such-cluster"}}}
	s.g.Expect(cluster.Client.Patch(ctx, class, patch)).To(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) {
		got := &awsv1.EC2NodeClass{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(s.class), got)).To(gomega.Succeed())
		subnets := meta.FindStatusCondition(got.Status.Conditions, awsv1.ConditionTypeSubnetsReady)
		g.Expect(subnets).NotTo(gomega.BeNil())
		g.Expect(subnets.Status).To(gomega.Equal(metav1.ConditionFalse))
		g.Expect(subnets.Reason).To(gomega.Equal("SubnetsNotFound"))
		g.Expect(subnets.Message).To(gomega.ContainSubstring("no-such-cluster"))
		ready := meta.FindStatusCondition(got.Status.Conditions, awsv1.ConditionTypeReady)
		g.Expect(ready).NotTo(gomega.BeNil())
		g.Expect(ready.Status).To(gomega.Equal(metav1.ConditionFalse))
		np := &v1.NodePool{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKeyFromObject(s.np), np)).To(gomega.Succeed())
		cond := meta.FindStatusCondition(np.Status.Conditions, v1.ConditionTypeNodeClassReady)
		g.Expect(cond).NotTo(gomega.BeNil())
		g.Expect(cond.Status).To(gomega.Equal(metav1.ConditionFalse))
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	s.spreadOut(1)
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(s.claims()).To(gomega.BeEmpty())
		g.Expect(s.running()).To(gomega.BeEmpty())
	}).WithTimeout(10 * time.Second).Should(gomega.Succeed())
}

// Deleting a NodePool deletes its NodeClaims and terminates their
// instances: the endpoint shows none left running for it.
func TestDeletingNodePoolTerminatesInstances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, setup{instanceTypes: []string{"c6i.large"}, capacityTypes: []string{v1.CapacityTypeOnDemand}})
	s.ready()
	s.spreadOut(2)
	var ids []string
	for _, nc := range s.settled(2) {
		ids = append(ids, instanceID(nc.Status.ProviderID))
	}
	s.g.Expect(cluster.Client.Delete(ctx, s.np)).To(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(s.claims()).To(gomega.BeEmpty())
		g.Expect(instances(g, ids...)).To(gomega.HaveLen(len(ids)))
		for id, inst := range instances(g, ids...) {
			g.Expect(state(inst)).To(gomega.Equal(ec2types.InstanceStateNameTerminated), "instance %s", id)
		}
		all, err := allInstances(ctx)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		for _, inst := range all {
			if tagsOf(inst)[v1.NodePoolLabelKey] == s.np.Name {
				g.Expect(state(inst)).To(gomega.Equal(ec2types.InstanceStateNameTerminated), "instance %s of the deleted NodePool", awssdk.ToString(inst.InstanceId))
			}
		}
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
}
