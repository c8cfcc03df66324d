package ec2nodeclass

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/pkg/disruption"
)

// CapacityBlockExpiringPeriod is how long before its end a capacity
// block is reported expiring rather than active (40 minutes, the
// reference's margin): EC2 reclaims a block's instances from
// CapacityBlockReclaimLead before its end and Capstan drains them
// CapacityBlockDrainLead before that, so the block takes no launch once
// its nodes are being drained.
const CapacityBlockExpiringPeriod = aws.CapacityBlockReclaimLead + disruption.CapacityBlockDrainLead

// resolveCapacityReservations lists, sorted by id, the reservations EC2
// returned for the terms that are active and have not ended at now. The
// condition is True even when none matches: a reservation may be made or
// shared later, and launches fall back to spot or on-demand meanwhile.
// A reservation of a match criteria or type Capstan does not know (EC2
// may add some) is left out and named in the message.
func resolveCapacityReservations(terms []awsv1.CapacityReservationSelectorTerm, found []ec2types.CapacityReservation, now time.Time) ([]awsv1.CapacityReservation, metav1.Condition) {
	var out []awsv1.CapacityReservation
	var skipped []string
	seen := map[string]bool{}
	for _, r := range found {
		id := deref(r.CapacityReservationId)
		if id == "" || seen[id] || r.State != ec2types.CapacityReservationStateActive {
			continue
		}
		if r.EndDate != nil && !r.EndDate.After(now) {
			continue
		}
		seen[id] = true
		cr, problem := capacityReservation(r, now)
		if problem != "" {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", id, problem))
			continue
		}
		out = append(out, cr)
	}
	slices.SortFunc(out, func(a, b awsv1.CapacityReservation) int { return cmp.Compare(a.ID, b.ID) })
	var messages []string
	if len(terms) > 0 && len(out) == 0 {
		messages = append(messages, "no active capacity reservation matches capacityReservationSelectorTerms "+termsText(terms))
	}
	if len(skipped) > 0 {
		slices.Sort(skipped)
		messages = append(messages, "left out: "+strings.Join(skipped, ", "))
	}
	return out, trueCondition(awsv1.ConditionTypeCapacityReservationsReady, strings.Join(messages, "; "))
}

// capacityReservation is r's status entry, or why it cannot be one.
func capacityReservation(r ec2types.CapacityReservation, now time.Time) (awsv1.CapacityReservation, string) {
	imc := awsv1.InstanceMatchCriteria(r.InstanceMatchCriteria)
	if imc != awsv1.InstanceMatchCriteriaOpen && imc != awsv1.InstanceMatchCriteriaTargeted {
		return awsv1.CapacityReservation{}, fmt.Sprintf("instance match criteria %q is unknown to Capstan", imc)
	}
	reservationType := awsv1.CapacityReservationType(r.ReservationType)
	switch reservationType {
	case "":
		reservationType = awsv1.CapacityReservationTypeDefault
	case awsv1.CapacityReservationTypeDefault, awsv1.CapacityReservationTypeCapacityBlock:
	default:
		return awsv1.CapacityReservation{}, fmt.Sprintf("reservation type %q is unknown to Capstan", reservationType)
	}
	cr := awsv1.CapacityReservation{
		AvailabilityZone:      deref(r.AvailabilityZone),
		ID:                    deref(r.CapacityReservationId),
		InstanceMatchCriteria: imc,
		InstanceType:          deref(r.InstanceType),
		OwnerID:               deref(r.OwnerId),
		ReservationType:       reservationType,
		Interruptible:         deref(r.Interruptible),
		State:                 awsv1.CapacityReservationStateActive,
		// Capstan's additive status fields (the reference has no
		// counts): what EC2 reported at this refresh.
		AvailableInstanceCount: r.AvailableInstanceCount,
		TotalInstanceCount:     r.TotalInstanceCount,
	}
	if r.EndDate != nil {
		end := metav1.NewTime(*r.EndDate)
		cr.EndTime = &end
		if reservationType == awsv1.CapacityReservationTypeCapacityBlock && !now.Before(r.EndDate.Add(-CapacityBlockExpiringPeriod)) {
			cr.State = awsv1.CapacityReservationStateExpiring
		}
	}
	return cr, ""
}
