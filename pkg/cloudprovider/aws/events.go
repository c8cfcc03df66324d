package aws

import (
	"encoding/json"
	"time"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// The EventBridge events the interruption queue carries, as the
// reference parses them (pkg/controllers/interruption/messages/*) and
// AWS documents their shapes: docs/aws.md, "Interruptions".

// Detail types of the events Capstan acts on.
const (
	detailSpotWarning        = "EC2 Spot Instance Interruption Warning"
	detailRebalance          = "EC2 Instance Rebalance Recommendation"
	detailStateChange        = "EC2 Instance State-change Notification"
	detailHealth             = "AWS Health Event"
	detailReservationWarning = "EC2 Capacity Reservation Instance Interruption Warning"
)

// ReservationNotice is how long before an interruptible capacity
// reservation's owner reclaims an instance EC2 warns, when the warning
// names no termination time (AWS, "Monitor interruptible Capacity
// Reservations with EventBridge and CloudTrail": 2 minutes).
const ReservationNotice = 2 * time.Minute

// event is the part of an EventBridge event Capstan reads.
type event struct {
	DetailType string `json:"detail-type"`
	Time       string `json:"time"`
	Detail     struct {
		InstanceID string `json:"instance-id"`
		State      string `json:"state"`
		// TerminationTime is the capacity reservation warning's
		// instance-termination-time.
		TerminationTime   string `json:"instance-termination-time"`
		EventTypeCategory string `json:"eventTypeCategory"`
		Service           string `json:"service"`
		StartTime         string `json:"startTime"`
		AffectedEntities  []struct {
			EntityValue string `json:"entityValue"`
		} `json:"affectedEntities"`
		EventDescription []struct {
			LatestDescription string `json:"latestDescription"`
		} `json:"eventDescription"`
	} `json:"detail"`
}

// parseEvent is the instances an EventBridge message announces and the
// notice each gets (ProviderID, type and zone left for the caller to
// resolve); false for anything else. An AWS Health event names every
// instance it affects in affectedEntities, each acted on as the
// reference's scheduledchange message does.
func parseEvent(body string) ([]string, cloudprovider.InterruptionNotice, bool) {
	var e event
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		return nil, cloudprovider.InterruptionNotice{}, false
	}
	at, _ := time.Parse(time.RFC3339, e.Time)
	ids, n := []string{e.Detail.InstanceID}, cloudprovider.InterruptionNotice{Message: e.DetailType}
	switch e.DetailType {
	case detailSpotWarning:
		n.Kind, n.Deadline = cloudprovider.SpotInterruption, at.Add(SpotNotice)
	case detailRebalance:
		n.Kind = cloudprovider.RebalanceRecommendation
	case detailStateChange:
		switch e.Detail.State {
		case "stopping", "stopped":
			n.Kind, n.Deadline = cloudprovider.InstanceStopping, at
		case "shutting-down", "terminated":
			n.Kind, n.Deadline = cloudprovider.InstanceTerminating, at
		default:
			return nil, n, false
		}
	case detailReservationWarning:
		n.Kind, n.Deadline = cloudprovider.CapacityReservationInterruption, at.Add(ReservationNotice)
		if t, err := time.Parse(time.RFC3339, e.Detail.TerminationTime); err == nil {
			n.Deadline = t
		}
	case detailHealth:
		if e.Detail.Service != "EC2" || e.Detail.EventTypeCategory != "scheduledChange" {
			return nil, n, false
		}
		ids = ids[:0]
		for _, a := range e.Detail.AffectedEntities {
			if a.EntityValue != "" {
				ids = append(ids, a.EntityValue)
			}
		}
		n.Kind = cloudprovider.ScheduledChange
		n.Deadline, _ = time.Parse(time.RFC1123, e.Detail.StartTime)
		if len(e.Detail.EventDescription) > 0 {
			n.Message = e.Detail.EventDescription[0].LatestDescription
		}
	default:
		return nil, n, false
	}
	if len(ids) == 0 || ids[0] == "" {
		return nil, n, false
	}
	return ids, n, true
}
