package aws

import (
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// The status checks as the reference reads them
// (pkg/providers/instancestatus): a failed instance or system check
// counts once it has failed for UnhealthyThreshold (120 s), a passed or
// initializing one never; a scheduled event counts at once, with its
// NotBefore as the deadline.
func TestUnhealthyNotices(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	check := func(status ec2types.StatusType, since time.Duration) *ec2types.InstanceStatusSummary {
		s := &ec2types.InstanceStatusSummary{Status: ec2types.SummaryStatusImpaired, Details: []ec2types.InstanceStatusDetails{{Name: ec2types.StatusNameReachability, Status: status}}}
		if since > 0 {
			s.Details[0].ImpairedSince = awssdk.Time(now.Add(-since))
		}
		return s
	}
	ok := &ec2types.InstanceStatusSummary{Status: ec2types.SummaryStatusOk, Details: []ec2types.InstanceStatusDetails{{Name: ec2types.StatusNameReachability, Status: ec2types.StatusTypePassed}}}
	status := func(instance, system *ec2types.InstanceStatusSummary, events ...ec2types.InstanceStatusEvent) ec2types.InstanceStatus {
		return ec2types.InstanceStatus{InstanceId: awssdk.String("i-1"), AvailabilityZone: awssdk.String("us-west-2a"), InstanceStatus: instance, SystemStatus: system, Events: events}
	}
	const pid = "aws:///us-west-2a/i-1"
	retire := ec2types.InstanceStatusEvent{Code: ec2types.EventCodeInstanceRetirement, Description: awssdk.String("The instance is running on degraded hardware"), NotBefore: awssdk.Time(now.Add(48 * time.Hour))}
	reboot := ec2types.InstanceStatusEvent{Code: ec2types.EventCodeSystemReboot, Description: awssdk.String("scheduled reboot"), NotBefore: awssdk.Time(now.Add(24 * time.Hour))}
	cases := []struct {
		name string
		in   ec2types.InstanceStatus
		want []cloudprovider.InterruptionNotice
	}{
		{"both checks pass", status(ok, ok), nil},
		{"instance check failed for the threshold", status(check(ec2types.StatusTypeFailed, UnhealthyThreshold), ok), []cloudprovider.InterruptionNotice{{
			Kind: cloudprovider.InstanceUnhealthy, ProviderID: pid, Zone: "us-west-2a", Deadline: now,
			Message: "EC2 status checks: instance status reachability failed since 2026-01-01T11:58:00Z"}}},
		{"system check failed for longer", status(ok, check(ec2types.StatusTypeFailed, 10*time.Minute)), []cloudprovider.InterruptionNotice{{
			Kind: cloudprovider.InstanceUnhealthy, ProviderID: pid, Zone: "us-west-2a", Deadline: now.Add(-8 * time.Minute),
			Message: "EC2 status checks: system status reachability failed since 2026-01-01T11:50:00Z"}}},
		{"both failed: the earliest counts", status(check(ec2types.StatusTypeFailed, 3*time.Minute), check(ec2types.StatusTypeFailed, 5*time.Minute)), []cloudprovider.InterruptionNotice{{
			Kind: cloudprovider.InstanceUnhealthy, ProviderID: pid, Zone: "us-west-2a", Deadline: now.Add(-3 * time.Minute),
			Message: "EC2 status checks: instance status reachability failed since 2026-01-01T11:57:00Z; system status reachability failed since 2026-01-01T11:55:00Z"}}},
		{"failed for less than the threshold", status(check(ec2types.StatusTypeFailed, UnhealthyThreshold-time.Second), ok), nil},
		{"initializing", status(check(ec2types.StatusTypeInitializing, 10*time.Minute), ok), nil},
		{"insufficient data", status(check(ec2types.StatusTypeInsufficientData, 10*time.Minute), ok), nil},
		{"a scheduled event: the earliest NotBefore", status(ok, ok, retire, reboot), []cloudprovider.InterruptionNotice{{
			Kind: cloudprovider.ScheduledChange, ProviderID: pid, Zone: "us-west-2a", Deadline: now.Add(24 * time.Hour),
			Message: "EC2 scheduled event system-reboot: scheduled reboot"}}},
		{"an event without NotBefore: now", status(ok, ok, ec2types.InstanceStatusEvent{Code: ec2types.EventCodeInstanceStop, Description: awssdk.String("stop")}), []cloudprovider.InterruptionNotice{{
			Kind: cloudprovider.ScheduledChange, ProviderID: pid, Zone: "us-west-2a", Deadline: now, Message: "EC2 scheduled event instance-stop: stop"}}},
		{"impaired and scheduled", status(check(ec2types.StatusTypeFailed, UnhealthyThreshold), nil, retire), []cloudprovider.InterruptionNotice{
			{Kind: cloudprovider.InstanceUnhealthy, ProviderID: pid, Zone: "us-west-2a", Deadline: now,
				Message: "EC2 status checks: instance status reachability failed since 2026-01-01T11:58:00Z"},
			{Kind: cloudprovider.ScheduledChange, ProviderID: pid, Zone: "us-west-2a", Deadline: now.Add(48 * time.Hour),
				Message: "EC2 scheduled event instance-retirement: The instance is running on degraded hardware"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, unhealthyNotices([]ec2types.InstanceStatus{tc.in}, now)); diff != "" {
				t.Errorf("notices (-want +got):\n%s", diff)
			}
		})
	}
}
