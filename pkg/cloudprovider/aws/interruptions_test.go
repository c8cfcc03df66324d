package aws_test

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// A spot interruption the simulated cloud issues reaches the provider
// through the interruption queue as EC2's EventBridge warning: every poll
// returns the notice, with the instance's provider id, type and zone and
// a deadline two minutes on, until the instance is gone.
func TestInterruptionsFromTheQueue(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	profile := &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a"}, Style: simv1alpha1.CloudStyleAWS,
		LaunchLatency: metav1.Duration{Duration: 2 * time.Second},
		Events:        []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: simv1alpha1.EventSpotInterruption, InstanceType: "m5.large", Zone: "us-west-2a"}},
	}}
	srv, err := ec2endpoint.New(ec2endpoint.Options{Profile: profile, Clock: clk, ClusterName: "interrupt",
		ClusterEndpoint: "https://interrupt.eks.test", ClusterCABundle: base64.StdEncoding.EncodeToString([]byte("interrupt CA"))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close()
	})
	creds := credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")
	api := ec2.New(ec2.Options{Region: "us-west-2", BaseEndpoint: awssdk.String(hs.URL), RetryMaxAttempts: 1, HTTPClient: aws.NewHTTPClient(), Credentials: creds})
	queue := sqs.New(sqs.Options{Region: "us-west-2", BaseEndpoint: awssdk.String(hs.URL), RetryMaxAttempts: 1, HTTPClient: aws.NewHTTPClient(), Credentials: creds})
	eksAPI := eks.New(eks.Options{Region: "us-west-2", BaseEndpoint: awssdk.String(hs.URL), RetryMaxAttempts: 1, HTTPClient: aws.NewHTTPClient(), Credentials: creds})
	class := readyNodeClass(t, api, "interrupt")
	p, err := aws.New(api, aws.Options{Region: "us-west-2", ClusterName: "interrupt", Clock: clk, NodeClasses: nodeClasses{class.Name: class},
		SQS: queue, InterruptionQueue: "interrupt", InterruptionWait: -1, Cluster: &aws.ClusterDiscovery{EKS: eksAPI, Name: "interrupt", Clock: clk}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "spot", Labels: map[string]string{v1.NodePoolLabelKey: "default"}}}
	nc.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: aws.NodeClassKind, Name: class.Name}
	nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
		{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}},
		{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot}},
	}
	launched, err := p.Create(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Interruptions(ctx); err != nil || len(got) != 0 {
		t.Fatalf("before the event: %v, %v", got, err)
	}
	clk.Step(time.Minute)
	want := cloudprovider.InterruptionNotice{Kind: cloudprovider.SpotInterruption, ProviderID: launched.Status.ProviderID, InstanceType: "m5.large", Zone: "us-west-2a",
		Deadline: clk.Now().Add(aws.SpotNotice), Message: "EC2 Spot Instance Interruption Warning"}
	for poll := range 2 {
		got, err := p.Interruptions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] != want {
			t.Fatalf("poll %d: %+v, want [%+v]", poll, got, want)
		}
	}
	clk.Step(aws.SpotNotice + time.Second)
	if _, err := p.Get(ctx, launched.Status.ProviderID); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("after the deadline the instance is %v, want gone", err)
	}
	if got, err := p.Interruptions(ctx); err != nil || len(got) != 0 {
		t.Errorf("once the instance is gone: %+v, %v; want none", got, err)
	}
}
