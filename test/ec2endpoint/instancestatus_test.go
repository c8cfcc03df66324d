package ec2endpoint_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// DescribeInstanceStatus reports the checks a test impaired, and the
// cloud's scheduled changes as scheduled events; the filters the AWS
// provider sends pick each out.
func TestDescribeInstanceStatus(t *testing.T) {
	f := newFixture(t, profile(func(s *simv1alpha1.CloudProfileSpec) {
		s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: simv1alpha1.EventScheduledChange, InstanceType: "m5.large", Zone: "us-west-2b"}}
	}))
	lt := createTemplate(t, f, "template", nil)
	sick := launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override("c5.large", subnetA))).Instances[0].InstanceIds[0]
	host := launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override("c5.large", subnetA))).Instances[0].InstanceIds[0]
	retiring := launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override("m5.large", subnetB))).Instances[0].InstanceIds[0]
	f.clock.Step(time.Minute)
	impairedAt := f.clock.Now()
	if err := f.server.ImpairInstance(sick, ec2endpoint.InstanceCheck); err != nil {
		t.Fatal(err)
	}
	if err := f.server.ImpairInstance(host, ec2endpoint.SystemCheck); err != nil {
		t.Fatal(err)
	}
	query := func(name, value string) []ec2types.InstanceStatus {
		t.Helper()
		out, err := f.client.DescribeInstanceStatus(context.Background(), &ec2.DescribeInstanceStatusInput{Filters: []ec2types.Filter{{Name: aws.String(name), Values: []string{value}}}})
		if err != nil {
			t.Fatal(err)
		}
		return out.InstanceStatuses
	}
	all, err := f.client.DescribeInstanceStatus(context.Background(), &ec2.DescribeInstanceStatusInput{})
	if err != nil || len(all.InstanceStatuses) != 3 {
		t.Fatalf("every running instance: %v, %v", all, err)
	}
	byInstance := query("instance-status.status", "impaired")
	if len(byInstance) != 1 || aws.ToString(byInstance[0].InstanceId) != sick {
		t.Fatalf("impaired instance checks: %+v, want %s", byInstance, sick)
	}
	d := byInstance[0].InstanceStatus.Details[0]
	if d.Status != ec2types.StatusTypeFailed || d.Name != ec2types.StatusNameReachability || !aws.ToTime(d.ImpairedSince).Equal(impairedAt) ||
		byInstance[0].SystemStatus.Status != ec2types.SummaryStatusOk || aws.ToString(byInstance[0].AvailabilityZone) != "us-west-2a" {
		t.Errorf("the impaired instance's checks: %+v", byInstance[0])
	}
	if bySystem := query("system-status.status", "impaired"); len(bySystem) != 1 || aws.ToString(bySystem[0].InstanceId) != host {
		t.Errorf("impaired system checks: %+v, want %s", bySystem, host)
	}
	events := query("event.code", "instance-retirement")
	if len(events) != 1 || aws.ToString(events[0].InstanceId) != retiring || len(events[0].Events) != 1 || aws.ToTime(events[0].Events[0].NotBefore).IsZero() {
		t.Errorf("scheduled events: %+v, want %s's retirement", events, retiring)
	}
}
