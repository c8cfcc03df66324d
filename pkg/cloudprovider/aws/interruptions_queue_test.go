package aws_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

// spotWarning is EC2's spot interruption warning for instance id, as
// EventBridge delivers it.
func spotWarning(now time.Time, id string) string {
	return fmt.Sprintf(`{"version":"0","id":"1","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","account":"111122223333",
"time":%q,"region":"us-west-2","resources":[],"detail":{"instance-id":%q,"instance-action":"terminate"}}`, now.UTC().Format(time.RFC3339), id)
}

// blockingEC2 holds each DescribeInstances until released, saying when
// one has started.
type blockingEC2 struct {
	aws.EC2
	entered, release chan struct{}
}

func (b *blockingEC2) DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.EC2.DescribeInstances(ctx, in, opts...)
}

// Acknowledge does not wait for a poll's DescribeInstances: the
// provider holds no lock across an AWS call. The notice acknowledged
// meanwhile is not returned by that poll.
func TestAcknowledgeDoesNotWaitOnEC2(t *testing.T) {
	e := newInterruptEnv(t, aws.Options{InterruptionWait: -1})
	nc := e.launch(t, "spot", v1.CapacityTypeSpot)
	e.send(t, spotWarning(e.clk.Now(), instanceOf(t, nc.Status.ProviderID)))
	slow := &blockingEC2{EC2: e.ec2, entered: make(chan struct{}, 1), release: make(chan struct{})}
	p := e.restart(t, slow)
	ctx := context.Background()
	polled := make(chan []cloudprovider.InterruptionNotice, 1)
	go func() {
		got, err := p.Interruptions(ctx)
		if err != nil {
			t.Error(err)
		}
		polled <- got
	}()
	<-slow.entered
	acked := make(chan error, 1)
	go func() {
		acked <- p.Acknowledge(ctx, []cloudprovider.InterruptionNotice{{Kind: cloudprovider.SpotInterruption, ProviderID: nc.Status.ProviderID}})
	}()
	select {
	case err := <-acked:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(time.Minute): // a deadlock guard, not a timing assertion
		t.Error("Acknowledge waited on DescribeInstances")
	}
	close(slow.release)
	if got := <-polled; len(got) != 0 {
		t.Errorf("the poll returned %+v acknowledged while it described the instance, want none", got)
	}
}

// A message stays in the queue until its notice is acknowledged: a
// restarted controller reads the warning again once its visibility
// timeout passes, a redelivery is still one notice, and acknowledging it
// (with the redelivery's receipt handle) deletes it for good.
func TestMessageKeptUntilAcknowledged(t *testing.T) {
	e := newInterruptEnv(t, aws.Options{InterruptionWait: -1})
	nc := e.launch(t, "spot", v1.CapacityTypeSpot)
	e.send(t, spotWarning(e.clk.Now(), instanceOf(t, nc.Status.ProviderID)))
	ctx := context.Background()
	poll := func(step string, p *aws.Provider, want int) []cloudprovider.InterruptionNotice {
		t.Helper()
		got, err := p.Interruptions(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if len(got) != want {
			t.Fatalf("%s: %+v, want %d notices", step, got, want)
		}
		return got
	}
	first := poll("first poll", e.p, 1)
	e.clk.Step(21 * time.Second) // past the 20 s visibility timeout
	poll("restarted before acting", e.restart(t, e.ec2), 1)
	e.clk.Step(21 * time.Second)
	if again := poll("the message redelivered", e.p, 1); !slices.Equal(again, first) {
		t.Errorf("redelivered: %+v, want %+v", again, first)
	}
	if err := e.p.Acknowledge(ctx, first); err != nil {
		t.Fatalf("acknowledging with the latest receipt handle: %v", err)
	}
	e.clk.Step(21 * time.Second)
	poll("restarted after acting", e.restart(t, e.ec2), 0)
}

// One poll drains the queue: a warning among 250 other messages, which
// a standard queue returns in no order, is seen by the first poll.
// Messages for unknown instances are deleted.
func TestPollDrainsTheQueue(t *testing.T) {
	e := newInterruptEnv(t, aws.Options{InterruptionWait: -1})
	nc := e.launch(t, "spot", v1.CapacityTypeSpot)
	for i := range 250 {
		e.send(t, spotWarning(e.clk.Now(), fmt.Sprintf("i-%017x", 0xdead0000+i)))
	}
	e.send(t, spotWarning(e.clk.Now(), instanceOf(t, nc.Status.ProviderID)))
	ctx := context.Background()
	got, err := e.p.Interruptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ProviderID != nc.Status.ProviderID {
		t.Fatalf("the first poll: %+v, want the warning for %s", got, nc.Status.ProviderID)
	}
	e.clk.Step(21 * time.Second)
	if got, err := e.restart(t, e.ec2).Interruptions(ctx); err != nil || len(got) != 1 {
		t.Errorf("after the visibility timeout: %+v, %v; want only the outstanding warning", got, err)
	}
}
