package ec2endpoint_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// healthEvent is the part of an AWS Health event a test reads.
type healthEvent struct {
	DetailType string   `json:"detail-type"`
	Resources  []string `json:"resources"`
	Detail     struct {
		InstanceID       string `json:"instance-id"`
		TerminationTime  string `json:"instance-termination-time"`
		AzID             string `json:"azId"`
		AffectedEntities []struct {
			EntityValue string `json:"entityValue"`
		} `json:"affectedEntities"`
	} `json:"detail"`
}

func receiveEvents(t *testing.T, f *fixture) []healthEvent {
	t.Helper()
	c := sqsClient(f)
	out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(f.url + "/111122223333/test-cluster"), MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	var events []healthEvent
	for _, m := range out.Messages {
		var e healthEvent
		if err := json.Unmarshal([]byte(*m.Body), &e); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	return events
}

// A scheduled change that affects several instances at once is one AWS
// Health event naming each in affectedEntities, as AWS Health sends it.
func TestHealthEventNamesEveryInstance(t *testing.T) {
	f := newFixture(t, profile(func(s *simv1alpha1.CloudProfileSpec) {
		s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: simv1alpha1.EventScheduledChange, InstanceType: "m5.large", Zone: "us-west-2b"}}
	}))
	lt := createTemplate(t, f, "template", nil)
	var ids []string
	for range 3 {
		ids = append(ids, launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override("m5.large", subnetB))).Instances[0].InstanceIds[0])
	}
	f.clock.Step(time.Minute)
	events := receiveEvents(t, f)
	if len(events) != 1 || events[0].DetailType != "AWS Health Event" {
		t.Fatalf("events %+v, want one AWS Health Event", events)
	}
	var got []string
	for _, e := range events[0].Detail.AffectedEntities {
		got = append(got, e.EntityValue)
	}
	slices.Sort(got)
	slices.Sort(ids)
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("affected entities (-want +got):\n%s", diff)
	}
}

// The endpoint warns of an interruptible reservation's reclaim as EC2
// does, for an instance in such a reservation only.
func TestReservationInterruptionWarning(t *testing.T) {
	f := newFixture(t, profile(withReservationKinds))
	in := fleetInput(createTemplate(t, f, "template", both(target("cr-interruptible"), market(ec2types.MarketTypeInterruptibleCapacityReservation))),
		v1.CapacityTypeOnDemand, override("m5.large", subnetA))
	reservedCapacity(in)
	id := launch(t, f, in).Instances[0].InstanceIds[0]
	other := launch(t, f, fleetInput(createTemplate(t, f, "plain", nil), v1.CapacityTypeOnDemand, override("m5.large", subnetA))).Instances[0].InstanceIds[0]
	if err := f.server.QueueReservationInterruption(other); err == nil {
		t.Errorf("an instance outside an interruptible reservation was warned")
	}
	if err := f.server.QueueReservationInterruption(id); err != nil {
		t.Fatal(err)
	}
	events := receiveEvents(t, f)
	if len(events) != 1 {
		t.Fatalf("events %+v, want one", events)
	}
	e := events[0]
	want := f.clock.Now().Add(2 * time.Minute).UTC().Format(time.RFC3339)
	if e.DetailType != "EC2 Capacity Reservation Instance Interruption Warning" || e.Detail.InstanceID != id || e.Detail.TerminationTime != want || e.Detail.AzID == "" {
		t.Errorf("event %+v, want a warning for %s terminating at %s with its zone id", e, id, want)
	}
}

// signalling is a transport that says when a request has gone out.
type signalling struct {
	http.RoundTripper
	sent chan struct{}
}

func (s signalling) RoundTrip(r *http.Request) (*http.Response, error) {
	s.sent <- struct{}{}
	return s.RoundTripper.RoundTrip(r)
}

// ReceiveMessage with WaitTimeSeconds waits for a message, as SQS long
// polling does, and returns with one sent while it waits.
func TestReceiveWaitsForAMessage(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	url := f.url + "/111122223333/test-cluster"
	sent := make(chan struct{}, 1)
	waiting := sqs.New(sqs.Options{Region: "us-west-2", BaseEndpoint: aws.String(f.url), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		HTTPClient:  &http.Client{Transport: signalling{RoundTripper: http.DefaultTransport, sent: sent}}})
	got := make(chan *sqs.ReceiveMessageOutput, 1)
	go func() {
		out, err := waiting.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 20})
		if err != nil {
			t.Error(err)
		}
		got <- out
	}()
	<-sent
	if _, err := sqsClient(f).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(`{"detail-type":"test"}`)}); err != nil {
		t.Fatal(err)
	}
	if out := <-got; out == nil || len(out.Messages) != 1 {
		t.Errorf("the waiting receive returned %+v, want the message sent while it waited", out)
	}
}
