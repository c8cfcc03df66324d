//go:build e2e

package aws

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	cpmetrics "github.com/capstan-dev/capstan/pkg/cloudprovider/metrics"
)

// busyInstances is how many instances with outstanding rebalance
// recommendations the scenario keeps: past EC2's 200 filter values per
// DescribeInstances call.
const busyInstances = 250

// 250 spot instances with rebalance recommendations outstanding and one
// spot interruption warning: the warning is acted on within one poll of
// the queue, and no poll fails. The 250 are launched through the
// endpoint's EC2 API, tagged for the cluster but in no NodePool (250
// NodeClaims with their Nodes would weigh on the shared e2e cluster):
// their notices follow the same path as a NodeClaim's (received,
// described every poll, in batches of 200), and since no NodeClaim owns
// them nothing acknowledges them, so they stay outstanding for as long
// as the instances run, as a busy account's would.
func TestInterruptionAmongManyNotices(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, setup{instanceTypes: []string{"r5.xlarge"}, capacityTypes: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}})
	class := s.ready()
	deployment := s.spreadOut(1)
	target := s.settled(1)[0]

	ami := class.Status.AMIs[0].ID
	for _, a := range class.Status.AMIs {
		if strings.Contains(a.Name, "-x86_64-standard-") {
			ami = a.ID
		}
	}
	busy := s.launchOutside(ami, ec2types.InstanceTypeR6iLarge, subnets["us-west-2c"], ec2types.DefaultTargetCapacityTypeSpot, busyInstances,
		[]ec2types.Tag{{Key: awssdk.String("kubernetes.io/cluster/" + clusterName), Value: awssdk.String("owned")}})
	// Terminated at the end, a few at a time: a terminating instance
	// holds the endpoint a while, and the other scenarios share it.
	t.Cleanup(func() {
		for batch := range slices.Chunk(busy, 10) {
			_, _ = api.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: batch})
		}
	})

	queue, err := events.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: awssdk.String(clusterName)})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	send := func(detailType, id string) {
		body := fmt.Sprintf(`{"version":"0","id":"e2e-%s","detail-type":%q,"source":"aws.ec2","account":"111122223333","time":%q,"region":%q,`+
			`"resources":["arn:aws:ec2:%s:111122223333:instance/%s"],"detail":{"instance-id":%q,"instance-action":"terminate"}}`,
			id, detailType, time.Now().UTC().Format(time.RFC3339), region, region, id, id)
		_, err := events.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: queue.QueueUrl, MessageBody: awssdk.String(body)})
		s.g.Expect(err).NotTo(gomega.HaveOccurred())
	}
	for _, id := range busy {
		send("EC2 Instance Rebalance Recommendation", id)
	}
	// A poll reads up to 100 messages: four polls begun after the last
	// send have read all 250 (one may have been under way).
	sent, _ := interruptionPolls(s.g)
	s.g.Eventually(func(g gomega.Gomega) {
		polls, _ := interruptionPolls(g)
		g.Expect(polls).To(gomega.BeNumerically(">=", sent+4))
	}).WithTimeout(time.Minute).Should(gomega.Succeed())

	before, failedBefore := interruptionPolls(s.g)
	send("EC2 Spot Instance Interruption Warning", instanceID(target.Status.ProviderID))
	s.g.Eventually(func(g gomega.Gomega) {
		nc := &v1.NodeClaim{}
		err := cluster.Client.Get(ctx, client.ObjectKey{Name: target.Name}, nc)
		g.Expect(client.IgnoreNotFound(err)).NotTo(gomega.HaveOccurred())
		g.Expect(err != nil || nc.DeletionTimestamp != nil).To(gomega.BeTrue(), "the warned NodeClaim is being deleted")
	}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(gomega.Succeed())
	after, failedAfter := interruptionPolls(s.g)
	// The poll under way when the warning was sent, the one that read
	// it (and acted), and at most one more finished before the deletion
	// was seen: a warning left for later polls, or polls refused past
	// 200 filter values, would take more or never come.
	if after-before > 3 {
		t.Errorf("the warning was acted on %g polls after it was sent, want within one (3 counting the poll under way and the check's lag)", after-before)
	}
	if failedAfter != failedBefore {
		t.Errorf("%g polls failed with 250 notices outstanding", failedAfter-failedBefore)
	}
	t.Logf("warning acted on %g polls after it was sent (%d notices outstanding)", after-before, busyInstances)
	// The replacement is TestInterruption's to check: here the workload
	// goes, so no pod waits on it.
	scaled := deployment.DeepCopy()
	scaled.Spec.Replicas = ptr.To[int32](0)
	s.g.Expect(cluster.Client.Patch(ctx, scaled, client.MergeFrom(deployment))).To(gomega.Succeed())
}

// interruptionPolls are the controller's completed and failed calls of
// the provider's Interruptions, from its metrics.
func interruptionPolls(g gomega.Gomega) (polls, failed float64) {
	resp, err := http.Get(metricsURL)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.Contains(line, `method="Interruptions"`) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		g.Expect(err).NotTo(gomega.HaveOccurred(), "metric line %q", line)
		switch {
		case strings.HasPrefix(line, cpmetrics.DurationMetric+"_count{"):
			polls += v
		case strings.HasPrefix(line, cpmetrics.ErrorsMetric+"{"):
			failed += v
		}
	}
	return polls, failed
}
