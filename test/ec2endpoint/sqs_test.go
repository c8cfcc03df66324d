package ec2endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

func sqsClient(f *fixture) *sqs.Client {
	return sqs.New(sqs.Options{
		Region: "us-west-2", BaseEndpoint: aws.String(f.url), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""), HTTPClient: ec2endpoint.NewHTTPClient(),
	})
}

// received is what a provider reads of an interruption message.
type received struct {
	DetailType, Source, Instance string
}

func receive(t *testing.T, c *sqs.Client, url string) ([]received, []sqstypes.Message) {
	t.Helper()
	out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(url), MaxNumberOfMessages: 10, VisibilityTimeout: 20,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameSentTimestamp},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []received
	for _, m := range out.Messages {
		var e struct {
			DetailType string `json:"detail-type"`
			Source     string `json:"source"`
			Detail     struct {
				InstanceID       string `json:"instance-id"`
				AffectedEntities []struct {
					EntityValue string `json:"entityValue"`
				} `json:"affectedEntities"`
			} `json:"detail"`
		}
		if err := json.Unmarshal([]byte(*m.Body), &e); err != nil {
			t.Fatalf("message %s: %v", *m.Body, err)
		}
		r := received{DetailType: e.DetailType, Source: e.Source, Instance: e.Detail.InstanceID}
		if len(e.Detail.AffectedEntities) > 0 {
			r.Instance = e.Detail.AffectedEntities[0].EntityValue
		}
		if m.Attributes["SentTimestamp"] == "" {
			t.Errorf("message without SentTimestamp: %v", m.Attributes)
		}
		got = append(got, r)
	}
	return got, out.Messages
}

// The cloud's interruption notices reach a provider as EventBridge
// delivers EC2's to its SQS queue: once each until deleted, again after
// the visibility timeout when not.
func TestInterruptionQueue(t *testing.T) {
	at := metav1.Duration{Duration: time.Minute}
	f := newFixture(t, profile(func(s *simv1alpha1.CloudProfileSpec) {
		s.Events = []simv1alpha1.CloudEvent{
			{At: at, Type: simv1alpha1.EventSpotInterruption, InstanceType: "c5.large", Zone: "us-west-2a"},
			{At: at, Type: simv1alpha1.EventRebalanceRecommendation, InstanceType: "c5.large", Zone: "us-west-2a"},
			{At: at, Type: simv1alpha1.EventScheduledChange, InstanceType: "m5.large", Zone: "us-west-2b"},
		}
	}))
	ctx := context.Background()
	lt := createTemplate(t, f, "template", nil)
	spot := launch(t, f, fleetInput(lt, v1.CapacityTypeSpot, override("c5.large", subnetA))).Instances[0].InstanceIds[0]
	od := launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override("m5.large", subnetB))).Instances[0].InstanceIds[0]
	c := sqsClient(f)
	url, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("test-cluster")})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := receive(t, c, *url.QueueUrl); len(got) != 0 {
		t.Errorf("messages before any notice: %v", got)
	}
	f.clock.Step(time.Minute)
	got, msgs := receive(t, c, *url.QueueUrl)
	want := []received{
		{"EC2 Spot Instance Interruption Warning", "aws.ec2", spot},
		{"EC2 Instance Rebalance Recommendation", "aws.ec2", spot},
		{"AWS Health Event", "aws.health", od},
	}
	sortReceived := func(r []received) {
		slices.SortFunc(r, func(a, b received) int { return strings.Compare(a.DetailType, b.DetailType) })
	}
	sortReceived(got)
	sortReceived(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("messages (-want +got):\n%s", diff)
	}
	for _, m := range msgs[1:] {
		if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
	if again, _ := receive(t, c, *url.QueueUrl); len(again) != 0 {
		t.Errorf("messages within the visibility timeout: %v", again)
	}
	f.clock.Step(20 * time.Second)
	again, redelivered := receive(t, c, *url.QueueUrl)
	if len(again) != 1 || *redelivered[0].MessageId != *msgs[0].MessageId {
		t.Errorf("after the visibility timeout: %v, want the one not deleted", again)
	}
}

func TestQueueErrorsAndSend(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	c := sqsClient(f)
	_, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("elsewhere")})
	var missing *sqstypes.QueueDoesNotExist
	if !errors.As(err, &missing) {
		t.Errorf("unknown queue: %v", err)
	}
	url := f.url + "/111122223333/test-cluster"
	sent, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(`{"detail-type":"test"}`)})
	if err != nil {
		t.Fatal(err)
	}
	got, msgs := receive(t, c, url)
	if len(got) != 1 || got[0].DetailType != "test" || *msgs[0].MessageId != *sent.MessageId {
		t.Errorf("received %v", got)
	}
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String("made-up")})
	var invalid *sqstypes.ReceiptHandleIsInvalid
	if !errors.As(err, &invalid) {
		t.Errorf("made-up receipt: %v", err)
	}
	_, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(f.url + "/111122223333/other")})
	if !errors.As(err, &missing) {
		t.Errorf("receiving from another queue: %v", err)
	}
}

// A receive returns the visible messages in no particular order, as a
// standard queue's best-effort ordering allows (Amazon SQS Developer
// Guide, "Amazon SQS standard queues"): 20 messages sent in order do
// not come back in that order, yet each comes back once.
func TestReceiveInNoOrder(t *testing.T) {
	f := newFixture(t, profile())
	c := sqsClient(f)
	ctx := context.Background()
	url := f.url + "/111122223333/test-cluster"
	var sent []string
	for i := range 20 {
		body := fmt.Sprintf(`{"detail-type":"test-%02d"}`, i)
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, body)
	}
	var got []string
	for range 2 {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, VisibilityTimeout: 20})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			got = append(got, aws.ToString(m.Body))
		}
	}
	if slices.Equal(got, sent) {
		t.Errorf("received in the order sent: %v", got)
	}
	slices.Sort(got)
	if !slices.Equal(got, sent) {
		t.Errorf("received %v, want each of %v once", got, sent)
	}
}
