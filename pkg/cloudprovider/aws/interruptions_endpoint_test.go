package aws_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// countingEC2 counts the interruption path's EC2 calls and the most
// filter values one DescribeInstances sent.
type countingEC2 struct {
	aws.EC2
	mu                          sync.Mutex
	describeInstances, statuses int
	maxValues                   int
}

func (c *countingEC2) DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	n := 0
	for _, f := range in.Filters {
		n += len(f.Values)
	}
	c.mu.Lock()
	c.describeInstances++
	c.maxValues = max(c.maxValues, n)
	c.mu.Unlock()
	return c.EC2.DescribeInstances(ctx, in, opts...)
}

func (c *countingEC2) DescribeInstanceStatus(ctx context.Context, in *ec2.DescribeInstanceStatusInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstanceStatusOutput, error) {
	c.mu.Lock()
	c.statuses++
	c.mu.Unlock()
	return c.EC2.DescribeInstanceStatus(ctx, in, opts...)
}

// take returns the counts since the last take and resets them.
func (c *countingEC2) take() (describeInstances, statuses, maxValues int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	describeInstances, statuses, maxValues = c.describeInstances, c.statuses, c.maxValues
	c.describeInstances, c.statuses, c.maxValues = 0, 0, 0
	return
}

// recordingSQS records each ReceiveMessage input and, when receiving is
// set, signals it before the call goes out.
type recordingSQS struct {
	aws.SQS
	mu        sync.Mutex
	inputs    []sqs.ReceiveMessageInput
	receiving chan struct{}
}

func (r *recordingSQS) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	r.mu.Lock()
	r.inputs = append(r.inputs, *in)
	r.mu.Unlock()
	if r.receiving != nil {
		r.receiving <- struct{}{}
	}
	return r.SQS.ReceiveMessage(ctx, in, opts...)
}

// interruptEnv is a provider reading the interruption queue of a local
// endpoint, with its EC2 and SQS calls counted.
type interruptEnv struct {
	clk   *clocktesting.FakeClock
	srv   *ec2endpoint.Server
	ec2   *countingEC2
	sqs   *recordingSQS
	queue *sqs.Client
	class *awsv1.EC2NodeClass
	opts  aws.Options
	p     *aws.Provider
}

func newInterruptEnv(t *testing.T, opts aws.Options, mods ...func(*simv1alpha1.CloudProfileSpec)) *interruptEnv {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	profile := &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: simv1alpha1.CloudStyleAWS,
		LaunchLatency: metav1.Duration{Duration: 2 * time.Second},
	}}
	for _, m := range mods {
		m(&profile.Spec)
	}
	var srv *ec2endpoint.Server
	api, cluster := endpointWith(t, ec2endpoint.Options{Profile: profile, Clock: clk, ClusterName: "interrupt"}, &srv)
	queue := sqs.New(sqs.Options{Region: "us-west-2", BaseEndpoint: api.Options().BaseEndpoint, RetryMaxAttempts: 1, HTTPClient: aws.NewHTTPClient(),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")})
	e := &interruptEnv{clk: clk, srv: srv, ec2: &countingEC2{EC2: api}, sqs: &recordingSQS{SQS: queue}, queue: queue, class: readyNodeClass(t, api, "interrupt")}
	opts.Region, opts.ClusterName, opts.Clock, opts.Cluster = "us-west-2", "interrupt", clk, cluster
	opts.NodeClasses, opts.SQS, opts.InterruptionQueue = nodeClasses{e.class.Name: e.class}, e.sqs, "interrupt"
	e.opts = opts
	e.p = e.restart(t, e.ec2)
	return e
}

// restart is another provider on the same endpoint and queue, as after
// the controller restarts.
func (e *interruptEnv) restart(t *testing.T, api aws.EC2) *aws.Provider {
	t.Helper()
	p, err := aws.New(api, e.opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (e *interruptEnv) launch(t *testing.T, name, capacityType string, reqs ...v1.NodeSelectorRequirementWithMinValues) *v1.NodeClaim {
	t.Helper()
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID("uid-" + name), Labels: map[string]string{v1.NodePoolLabelKey: "default"}}}
	nc.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: aws.NodeClassKind, Name: e.class.Name}
	nc.Spec.Requirements = append([]v1.NodeSelectorRequirementWithMinValues{
		{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}},
		{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-2a"}},
		{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{capacityType}},
	}, reqs...)
	got, err := e.p.Create(context.Background(), nc)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// send delivers an EventBridge event to the queue as a rule would.
func (e *interruptEnv) send(t *testing.T, body string) {
	t.Helper()
	url, err := e.queue.GetQueueUrl(context.Background(), &sqs.GetQueueUrlInput{QueueName: awssdk.String("interrupt")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.queue.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: awssdk.String(body)}); err != nil {
		t.Fatal(err)
	}
}

func instanceOf(t *testing.T, providerID string) string {
	t.Helper()
	return providerID[len(providerID)-len("i-")-12:]
}

// 250 spot instances with outstanding rebalance recommendations: each
// poll describes them at most 200 ids a call, where one filter of 250
// would be refused by EC2 with FilterLimitExceeded; once the controller
// acknowledges the recommendations they are no longer described at all,
// and a spot interruption warning sent then is returned by the very next
// poll, with one DescribeInstances call of one id.
func TestInterruptionsPastTheFilterLimit(t *testing.T) {
	e := newInterruptEnv(t, aws.Options{InterruptionWait: -1}, func(s *simv1alpha1.CloudProfileSpec) {
		s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: simv1alpha1.EventRebalanceRecommendation, InstanceType: "m5.large", Zone: "us-west-2a"}}
	})
	ctx := context.Background()
	var claims []*v1.NodeClaim
	for i := range 250 {
		claims = append(claims, e.launch(t, fmt.Sprintf("spot-%03d", i), v1.CapacityTypeSpot))
	}
	e.clk.Step(time.Minute)
	var notices []cloudprovider.InterruptionNotice
	for poll := 0; len(notices) < 250; poll++ {
		if poll == 5 {
			t.Fatalf("after %d polls %d notices, want 250", poll, len(notices))
		}
		var err error
		if notices, err = e.p.Interruptions(ctx); err != nil {
			t.Fatalf("poll %d: %v", poll, err)
		}
		if _, _, most := e.ec2.take(); most > 200 {
			t.Fatalf("poll %d: a DescribeInstances call with %d filter values", poll, most)
		}
	}
	notices, err := e.p.Interruptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if calls, _, most := e.ec2.take(); calls != 2 || most != 200 || len(notices) != 250 {
		t.Fatalf("250 outstanding notices: %d notices in %d DescribeInstances calls of up to %d ids, want 250 in 2 of up to 200", len(notices), calls, most)
	}
	if err := e.p.Acknowledge(ctx, notices); err != nil {
		t.Fatal(err)
	}
	target := claims[137]
	e.send(t, fmt.Sprintf(`{"version":"0","id":"1","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","account":"111122223333",
"time":%q,"region":"us-west-2","resources":[],"detail":{"instance-id":%q,"instance-action":"terminate"}}`,
		e.clk.Now().UTC().Format(time.RFC3339), instanceOf(t, target.Status.ProviderID)))
	got, err := e.p.Interruptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []cloudprovider.InterruptionNotice{{Kind: cloudprovider.SpotInterruption, ProviderID: target.Status.ProviderID, InstanceType: "m5.large", Zone: "us-west-2a",
		Deadline: e.clk.Now().Add(aws.SpotNotice), Message: "EC2 Spot Instance Interruption Warning"}}
	if !slices.Equal(got, want) {
		t.Errorf("the poll after the warning: %+v, want %+v", got, want)
	}
	if calls, _, most := e.ec2.take(); calls != 1 || most != 1 {
		t.Errorf("the poll after the warning made %d DescribeInstances calls of up to %d ids, want 1 of 1", calls, most)
	}
}

// A scheduled change naming several instances is a notice for each.
func TestHealthEventEveryEntity(t *testing.T) {
	e := newInterruptEnv(t, aws.Options{InterruptionWait: -1}, func(s *simv1alpha1.CloudProfileSpec) {
		s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: simv1alpha1.EventScheduledChange, InstanceType: "m5.large", Zone: "us-west-2a"}}
	})
	var want []string
	for i := range 3 {
		want = append(want, e.launch(t, fmt.Sprintf("od-%d", i), v1.CapacityTypeOnDemand).Status.ProviderID)
	}
	e.clk.Step(time.Minute)
	got, err := e.p.Interruptions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range got {
		if n.Kind == cloudprovider.ScheduledChange {
			ids = append(ids, n.ProviderID)
		}
	}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("scheduled changes for %v, want %v", ids, want)
	}
}

// A capacity reservation interruption warning interrupts the instance
// by the warning's termination time and offers the reservation no more
// until it is next described.
func TestReservationInterruption(t *testing.T) {
	e := newInterruptEnv(t, aws.Options{InterruptionWait: -1}, func(s *simv1alpha1.CloudProfileSpec) {
		s.Reservations = []simv1alpha1.Reservation{{ID: "cr-interruptible", InstanceType: "m5.large", Zone: "us-west-2a", Count: 2,
			Type: simv1alpha1.ReservationTypeTargeted, OwnerID: "111122223333", Interruptible: true}}
	})
	e.class.Status.CapacityReservations = []awsv1.CapacityReservation{{ID: "cr-interruptible", AvailabilityZone: "us-west-2a", InstanceType: "m5.large", OwnerID: "111122223333",
		InstanceMatchCriteria: awsv1.InstanceMatchCriteriaTargeted, ReservationType: awsv1.CapacityReservationTypeDefault, State: awsv1.CapacityReservationStateActive, Interruptible: true}}
	ctx := context.Background()
	np := &v1.NodePool{}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: aws.NodeClassKind, Name: e.class.Name}
	free := func() int {
		t.Helper()
		its, err := e.p.GetInstanceTypes(ctx, np)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range its {
			for _, o := range it.Offerings {
				if o.ReservationID == "cr-interruptible" {
					return o.Available
				}
			}
		}
		return -1
	}
	nc := e.launch(t, "reserved", v1.CapacityTypeReserved)
	if got := free(); got != 1 {
		t.Fatalf("before the warning the reservation has %d free, want 1", got)
	}
	if err := e.srv.QueueReservationInterruption(instanceOf(t, nc.Status.ProviderID)); err != nil {
		t.Fatal(err)
	}
	got, err := e.p.Interruptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []cloudprovider.InterruptionNotice{{Kind: cloudprovider.CapacityReservationInterruption, ProviderID: nc.Status.ProviderID, InstanceType: "m5.large", Zone: "us-west-2a",
		Deadline: e.clk.Now().Add(2 * time.Minute), Message: "EC2 Capacity Reservation Instance Interruption Warning"}}
	if !slices.Equal(got, want) {
		t.Errorf("notices %+v, want %+v", got, want)
	}
	if got := free(); got != 0 {
		t.Errorf("after the warning the reservation has %d free, want 0", got)
	}
	if err := e.p.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := free(); got != 1 {
		t.Errorf("once described again the reservation has %d free, want 1", got)
	}
}

// Each poll long-polls the queue as the reference does (20 s, 10
// messages, a 20 s visibility timeout), and a cancelled context ends the
// wait: the controller's shutdown is not held up by it.
func TestLongPollingEndsWithTheContext(t *testing.T) {
	e := newInterruptEnv(t, aws.Options{})
	e.sqs.receiving = make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-e.sqs.receiving
		cancel()
	}()
	_, err := e.p.Interruptions(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Interruptions with its context cancelled mid-wait: %v, want context.Canceled", err)
	}
	in := e.sqs.inputs[0]
	if in.WaitTimeSeconds != 20 || in.MaxNumberOfMessages != 10 || in.VisibilityTimeout != 20 {
		t.Errorf("ReceiveMessage waits %d s for %d messages hidden %d s, want 20, 10, 20", in.WaitTimeSeconds, in.MaxNumberOfMessages, in.VisibilityTimeout)
	}
}

// A failed status check is a notice once it has failed for the
// reference's 120 s, polled at most once a minute.
func TestInstanceStatusChecks(t *testing.T) {
	e := newInterruptEnv(t, aws.Options{InterruptionWait: -1})
	ctx := context.Background()
	nc := e.launch(t, "sick", v1.CapacityTypeOnDemand)
	e.clk.Step(10 * time.Second)
	if err := e.srv.ImpairInstance(instanceOf(t, nc.Status.ProviderID), ec2endpoint.SystemCheck); err != nil {
		t.Fatal(err)
	}
	impaired := e.clk.Now()
	if got, err := e.p.Interruptions(ctx); err != nil || len(got) != 0 {
		t.Fatalf("just impaired: %+v, %v; want none", got, err)
	}
	if _, statuses, _ := e.ec2.take(); statuses != 3 {
		t.Errorf("a status poll made %d DescribeInstanceStatus calls, want the reference's 3 queries", statuses)
	}
	e.clk.Step(aws.UnhealthyThreshold)
	got, err := e.p.Interruptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Kind != cloudprovider.InstanceUnhealthy || got[0].ProviderID != nc.Status.ProviderID || !got[0].Deadline.Equal(impaired.Add(aws.UnhealthyThreshold)) {
		t.Fatalf("after the threshold: %+v, want the instance unhealthy since %s", got, impaired.Add(aws.UnhealthyThreshold))
	}
	e.ec2.take()
	e.clk.Step(30 * time.Second)
	if again, err := e.p.Interruptions(ctx); err != nil || !slices.Equal(again, got) {
		t.Errorf("within the interval: %+v, %v; want the last poll's", again, err)
	}
	if _, statuses, _ := e.ec2.take(); statuses != 0 {
		t.Errorf("within the interval %d DescribeInstanceStatus calls, want none", statuses)
	}
}
