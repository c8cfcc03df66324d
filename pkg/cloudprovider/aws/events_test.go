package aws

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// The events as AWS documents them (docs/aws.md, "Interruptions"): the
// EC2 User Guide's examples for the spot interruption warning, the
// rebalance recommendation and the state-change notification; the AWS
// Health User Guide's EventBridge schema sample for a scheduled change
// with several affected entities; the interruptible Capacity
// Reservations page's instance interruption warning.
const (
	docSpotWarning = `{"version":"0","id":"12345678-1234-1234-1234-123456789012","detail-type":"EC2 Spot Instance Interruption Warning",
"source":"aws.ec2","account":"123456789012","time":"2026-01-01T00:00:00Z","region":"us-east-2",
"resources":["arn:aws:ec2:us-east-2a:instance/i-1234567890abcdef0"],"detail":{"instance-id":"i-1234567890abcdef0","instance-action":"terminate"}}`
	docRebalance = `{"version":"0","id":"12345678-1234-1234-1234-123456789012","detail-type":"EC2 Instance Rebalance Recommendation",
"source":"aws.ec2","account":"123456789012","time":"2026-01-01T00:00:00Z","region":"us-east-2",
"resources":["arn:aws:ec2:us-east-2:123456789012:instance/i-1234567890abcdef0"],"detail":{"instance-id":"i-1234567890abcdef0"}}`
	docStateChange = `{"id":"7bf73129-1428-4cd3-a780-95db273d1602","detail-type":"EC2 Instance State-change Notification","source":"aws.ec2",
"account":"123456789012","time":"2026-01-01T00:00:00Z","region":"us-east-1","resources":["arn:aws:ec2:us-east-1:123456789012:instance/i-abcd1111"],
"detail":{"instance-id":"i-abcd1111","state":"%s"}}`
	docHealth = `{"version":"0","id":"7bf73129-1428-4cd3-a780-95db273d1602","detail-type":"AWS Health Event","source":"aws.health",
"account":"123456789012","time":"2026-01-01T00:00:00Z","region":"us-east-1","resources":["i-abcd1111","i-abcd2222"],
"detail":{"eventArn":"arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_ABC123",
"service":"EC2","eventTypeCode":"AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED","eventTypeCategory":"scheduledChange","eventScopeCode":"ACCOUNT_SPECIFIC",
"startTime":"Thu, 01 Jan 2026 06:00:00 GMT","endTime":"Thu, 01 Jan 2026 07:00:00 GMT","statusCode":"upcoming","eventRegion":"us-east-1",
"eventDescription":[{"language":"en_US","latestDescription":"EC2 has detected degradation of the underlying hardware hosting your instances"}],
"affectedEntities":[{"entityValue":"i-abcd1111","status":"PENDING"},{"entityValue":"i-abcd2222","status":"PENDING"}]}}`
	docReservationWarning = `{"version":"0","id":"12345678-1234-1234-1234-123456789012","detail-type":"EC2 Capacity Reservation Instance Interruption Warning",
"source":"aws.ec2","account":"123456789012","time":"2026-01-01T00:00:00Z","resources":["arn:aws:ec2:us-east-1:123456789012:instance/i-abcd3333"],
"region":"us-east-1","detail":{"instance-id":"i-abcd3333","instance-action":"terminate","instance-termination-time":"2026-01-01T00:02:30Z","azId":"use1-az1"}}`
)

func TestParseEvent(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	state := func(s string) string { return fmt.Sprintf(docStateChange, s) }
	cases := []struct {
		name, body string
		ids        []string
		want       cloudprovider.InterruptionNotice
		ok         bool
	}{
		{"spot warning", docSpotWarning, []string{"i-1234567890abcdef0"},
			cloudprovider.InterruptionNotice{Kind: cloudprovider.SpotInterruption, Deadline: at.Add(SpotNotice), Message: detailSpotWarning}, true},
		{"rebalance", docRebalance, []string{"i-1234567890abcdef0"},
			cloudprovider.InterruptionNotice{Kind: cloudprovider.RebalanceRecommendation, Message: detailRebalance}, true},
		{"stopping", state("stopping"), []string{"i-abcd1111"},
			cloudprovider.InterruptionNotice{Kind: cloudprovider.InstanceStopping, Deadline: at, Message: detailStateChange}, true},
		{"stopped", state("stopped"), []string{"i-abcd1111"},
			cloudprovider.InterruptionNotice{Kind: cloudprovider.InstanceStopping, Deadline: at, Message: detailStateChange}, true},
		{"shutting down", state("shutting-down"), []string{"i-abcd1111"},
			cloudprovider.InterruptionNotice{Kind: cloudprovider.InstanceTerminating, Deadline: at, Message: detailStateChange}, true},
		{"terminated", state("terminated"), []string{"i-abcd1111"},
			cloudprovider.InterruptionNotice{Kind: cloudprovider.InstanceTerminating, Deadline: at, Message: detailStateChange}, true},
		{"running is no notice", state("running"), nil, cloudprovider.InterruptionNotice{}, false},
		{"pending is no notice", state("pending"), nil, cloudprovider.InterruptionNotice{}, false},
		{"a scheduled change names every affected instance", docHealth, []string{"i-abcd1111", "i-abcd2222"},
			cloudprovider.InterruptionNotice{Kind: cloudprovider.ScheduledChange, Deadline: at.Add(6 * time.Hour),
				Message: "EC2 has detected degradation of the underlying hardware hosting your instances"}, true},
		{"a capacity reservation interruption warning, with its termination time", docReservationWarning, []string{"i-abcd3333"},
			cloudprovider.InterruptionNotice{Kind: cloudprovider.CapacityReservationInterruption, Deadline: at.Add(150 * time.Second), Message: detailReservationWarning}, true},
		{"a capacity reservation interruption warning without one: two minutes", `{"detail-type":"EC2 Capacity Reservation Instance Interruption Warning",
"time":"2026-01-01T00:00:00Z","detail":{"instance-id":"i-abcd3333","instance-action":"terminate"}}`, []string{"i-abcd3333"},
			cloudprovider.InterruptionNotice{Kind: cloudprovider.CapacityReservationInterruption, Deadline: at.Add(ReservationNotice), Message: detailReservationWarning}, true},
		{"a health event of another service", `{"detail-type":"AWS Health Event","detail":{"service":"RDS","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"db"}]}}`,
			nil, cloudprovider.InterruptionNotice{}, false},
		{"a health issue, not a scheduled change", `{"detail-type":"AWS Health Event","detail":{"service":"EC2","eventTypeCategory":"issue","affectedEntities":[{"entityValue":"i-abcd1111"}]}}`,
			nil, cloudprovider.InterruptionNotice{}, false},
		{"a scheduled change naming no instance", `{"detail-type":"AWS Health Event","detail":{"service":"EC2","eventTypeCategory":"scheduledChange","affectedEntities":[]}}`,
			nil, cloudprovider.InterruptionNotice{}, false},
		{"not JSON", `{`, nil, cloudprovider.InterruptionNotice{}, false},
		{"no instance", `{"detail-type":"EC2 Instance Rebalance Recommendation","detail":{}}`, nil, cloudprovider.InterruptionNotice{}, false},
		{"another detail type", `{"detail-type":"Capacity Block Expiration Warning","detail":{"capacity-reservation-id":"cr-1"}}`, nil, cloudprovider.InterruptionNotice{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ids, n, ok := parseEvent(tc.body)
			if ok != tc.ok {
				t.Fatalf("parseEvent ok = %t, want %t", ok, tc.ok)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(tc.ids, ids); diff != "" {
				t.Errorf("instances (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, n); diff != "" {
				t.Errorf("notice (-want +got):\n%s", diff)
			}
		})
	}
}
