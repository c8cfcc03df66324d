package aws

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

func TestParseEvent(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name, body string
		id         string
		want       cloudprovider.InterruptionNotice
		ok         bool
	}{
		{"spot warning", `{"detail-type":"EC2 Spot Instance Interruption Warning","time":"2026-01-01T00:00:00Z","detail":{"instance-id":"i-1","instance-action":"terminate"}}`,
			"i-1", cloudprovider.InterruptionNotice{Kind: cloudprovider.SpotInterruption, Deadline: at.Add(SpotNotice), Message: "EC2 Spot Instance Interruption Warning"}, true},
		{"rebalance", `{"detail-type":"EC2 Instance Rebalance Recommendation","time":"2026-01-01T00:00:00Z","detail":{"instance-id":"i-2"}}`,
			"i-2", cloudprovider.InterruptionNotice{Kind: cloudprovider.RebalanceRecommendation, Message: "EC2 Instance Rebalance Recommendation"}, true},
		{"stopping", `{"detail-type":"EC2 Instance State-change Notification","time":"2026-01-01T00:00:00Z","detail":{"instance-id":"i-3","state":"stopping"}}`,
			"i-3", cloudprovider.InterruptionNotice{Kind: cloudprovider.InstanceStopping, Deadline: at, Message: "EC2 Instance State-change Notification"}, true},
		{"shutting down", `{"detail-type":"EC2 Instance State-change Notification","time":"2026-01-01T00:00:00Z","detail":{"instance-id":"i-4","state":"shutting-down"}}`,
			"i-4", cloudprovider.InterruptionNotice{Kind: cloudprovider.InstanceTerminating, Deadline: at, Message: "EC2 Instance State-change Notification"}, true},
		{"running is no notice", `{"detail-type":"EC2 Instance State-change Notification","detail":{"instance-id":"i-5","state":"running"}}`, "", cloudprovider.InterruptionNotice{}, false},
		{"scheduled change", `{"detail-type":"AWS Health Event","detail":{"service":"EC2","eventTypeCategory":"scheduledChange","startTime":"Thu, 01 Jan 2026 06:00:00 UTC",
			"eventDescription":[{"latestDescription":"retiring"}],"affectedEntities":[{"entityValue":"i-6"}]}}`,
			"i-6", cloudprovider.InterruptionNotice{Kind: cloudprovider.ScheduledChange, Deadline: at.Add(6 * time.Hour), Message: "retiring"}, true},
		{"another health event", `{"detail-type":"AWS Health Event","detail":{"service":"RDS","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"db"}]}}`, "", cloudprovider.InterruptionNotice{}, false},
		{"not JSON", `{`, "", cloudprovider.InterruptionNotice{}, false},
		{"no instance", `{"detail-type":"EC2 Instance Rebalance Recommendation","detail":{}}`, "", cloudprovider.InterruptionNotice{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, n, ok := parseEvent(tc.body)
			if ok != tc.ok || id != tc.id {
				t.Fatalf("parseEvent = %q, %t; want %q, %t", id, ok, tc.id, tc.ok)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(tc.want, n); diff != "" {
				t.Errorf("notice (-want +got):\n%s", diff)
			}
		})
	}
}
