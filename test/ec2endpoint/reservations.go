package ec2endpoint

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

type describeCapacityReservationsResponse struct {
	responseMeta
	Reservations []capacityReservationXML `xml:"capacityReservationSet>item"`
	NextToken    string                   `xml:"nextToken,omitempty"`
}

type capacityReservationXML struct {
	CapacityReservationID  string   `xml:"capacityReservationId"`
	CapacityReservationArn string   `xml:"capacityReservationArn"`
	OwnerID                string   `xml:"ownerId"`
	InstanceType           string   `xml:"instanceType"`
	InstancePlatform       string   `xml:"instancePlatform"`
	AvailabilityZone       string   `xml:"availabilityZone"`
	AvailabilityZoneID     string   `xml:"availabilityZoneId"`
	Tenancy                string   `xml:"tenancy"`
	TotalInstanceCount     int      `xml:"totalInstanceCount"`
	AvailableInstanceCount int      `xml:"availableInstanceCount"`
	EBSOptimized           bool     `xml:"ebsOptimized"`
	State                  string   `xml:"state"`
	StartDate              string   `xml:"startDate,omitempty"`
	EndDate                string   `xml:"endDate,omitempty"`
	EndDateType            string   `xml:"endDateType"`
	InstanceMatchCriteria  string   `xml:"instanceMatchCriteria"`
	CreateDate             string   `xml:"createDate"`
	ReservationType        string   `xml:"reservationType"`
	Interruptible          bool     `xml:"interruptible"`
	Tags                   []tagXML `xml:"tagSet>item"`
}

// reservationState is EC2's state of a reservation at now: scheduled
// before it starts (a capacity block) or pending (an ordinary one),
// expired once it ended, active between.
func reservationState(r sim.Reservation, now time.Time) string {
	switch {
	case r.Ended || !r.End.IsZero() && !now.Before(r.End):
		return "expired"
	case !r.Start.IsZero() && now.Before(r.Start):
		if r.CapacityBlock {
			return "scheduled"
		}
		return "pending"
	}
	return "active"
}

func (s *Server) reservationXML(r sim.Reservation, now time.Time, created time.Time) capacityReservationXML {
	x := capacityReservationXML{
		CapacityReservationID:  r.ID,
		CapacityReservationArn: s.ownedARN("capacity-reservation", r.OwnerID, r.ID),
		OwnerID:                r.OwnerID, InstanceType: r.InstanceType, InstancePlatform: "Linux/UNIX",
		AvailabilityZone: r.Zone, AvailabilityZoneID: s.zoneID(r.Zone), Tenancy: "default",
		// EC2 reports the truth when asked: how many slots other accounts
		// took is the simulated cloud's true count, not what the sim's own
		// provider last observed.
		TotalInstanceCount: r.Total, AvailableInstanceCount: r.Available(), EBSOptimized: true,
		State: reservationState(r, now), EndDateType: "unlimited", InstanceMatchCriteria: string(r.Type),
		CreateDate: timestamp(created), ReservationType: "default", Tags: tagSet(r.Tags),
	}
	if !r.Start.IsZero() {
		x.StartDate = timestamp(r.Start)
	}
	if !r.End.IsZero() {
		x.EndDate, x.EndDateType = timestamp(r.End), "limited"
	}
	if r.CapacityBlock {
		x.ReservationType = "capacity-block"
	}
	x.Interruptible = r.Interruptible
	if x.State != "active" {
		x.AvailableInstanceCount = 0
	}
	return x
}

// describeCapacityReservations serves the profile's reservations with
// their use now. Reservations were created when the cloud started.
func (s *Server) describeCapacityReservations(_ context.Context, p params) (response, error) {
	fs, err := p.filters([]string{
		"instance-type", "owner-id", "availability-zone", "instance-platform", "tenancy", "state",
		"start-date", "end-date", "end-date-type", "instance-match-criteria", "reservation-type",
	}, true)
	if err != nil {
		return nil, err
	}
	snap := s.cloud.Snapshot()
	now := s.opts.Clock.Now()
	all := make([]sim.Reservation, 0, len(snap.Reservations))
	for _, r := range snap.Reservations {
		all = append(all, *r)
	}
	slices.SortFunc(all, func(a, b sim.Reservation) int { return cmp.Compare(a.ID, b.ID) })
	ids := p.list("CapacityReservationId")
	for _, id := range ids {
		if !strings.HasPrefix(id, "cr-") {
			return nil, errorf("InvalidCapacityReservationId.Malformed", "Invalid id: \"%s\" (expecting \"cr-...\")", id)
		}
		if snap.Reservations[id] == nil {
			return nil, errorf("InvalidCapacityReservationId.NotFound", "The capacity reservation ID '%s' does not exist", id)
		}
	}
	var out []capacityReservationXML
	for _, r := range all {
		x := s.reservationXML(r, now, snap.Start)
		res := resource{fields: map[string][]string{
			"instance-type": {x.InstanceType}, "owner-id": {x.OwnerID}, "availability-zone": {x.AvailabilityZone},
			"instance-platform": {x.InstancePlatform}, "tenancy": {x.Tenancy}, "state": {x.State}, "start-date": {x.StartDate},
			"end-date": {x.EndDate}, "end-date-type": {x.EndDateType}, "instance-match-criteria": {x.InstanceMatchCriteria},
			"reservation-type": {x.ReservationType},
		}, tags: r.Tags}
		if (len(ids) == 0 || slices.Contains(ids, r.ID)) && matches(fs, res) {
			out = append(out, x)
		}
	}
	items, next, err := page(p, out, pageLimits{min: 1, max: 1000})
	if err != nil {
		return nil, err
	}
	return &describeCapacityReservationsResponse{Reservations: items, NextToken: next}, nil
}
