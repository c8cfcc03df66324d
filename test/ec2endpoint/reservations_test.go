package ec2endpoint_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
)

// reservation is what a provider reads of a reservation.
type reservation struct {
	ID, Type, Zone, ZoneID, Owner, State, Criteria, ReservationType string
	Total, Available                                                int32
	End                                                             string
	Tags                                                            map[string]string
}

func reservations(t *testing.T, f *fixture, in *ec2.DescribeCapacityReservationsInput) []reservation {
	t.Helper()
	var out []reservation
	pager := ec2.NewDescribeCapacityReservationsPaginator(f.client, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.CapacityReservations {
			res := reservation{
				ID: *r.CapacityReservationId, Type: *r.InstanceType, Zone: *r.AvailabilityZone, ZoneID: *r.AvailabilityZoneId,
				Owner: *r.OwnerId, State: string(r.State), Criteria: string(r.InstanceMatchCriteria), ReservationType: string(r.ReservationType),
				Total: *r.TotalInstanceCount, Available: *r.AvailableInstanceCount, Tags: map[string]string{},
			}
			if r.EndDate != nil {
				res.End = r.EndDate.UTC().Format(time.RFC3339)
			}
			for _, tag := range r.Tags {
				res.Tags[*tag.Key] = *tag.Value
			}
			out = append(out, res)
		}
	}
	return out
}

func TestDescribeCapacityReservations(t *testing.T) {
	f := newFixture(t, profile(func(s *simv1alpha1.CloudProfileSpec) {
		s.Reservations = append(s.Reservations, simv1alpha1.Reservation{
			ID: "cr-block", InstanceType: "p5.48xlarge", Zone: "us-west-2a", Count: 1, Type: simv1alpha1.ReservationTypeTargeted,
			OwnerID: "111122223333", CapacityBlock: true, StartTime: &metav1.Duration{Duration: time.Hour}, EndTime: &metav1.Duration{Duration: 3 * time.Hour},
		})
		s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: simv1alpha1.EventReservationConsumedExternally, ReservationID: "cr-open", Count: ptr.To(1)}}
	}))
	want := []reservation{
		{ID: "cr-block", Type: "p5.48xlarge", Zone: "us-west-2a", ZoneID: "usw2-az1", Owner: "111122223333", State: "scheduled", Criteria: "targeted",
			ReservationType: "capacity-block", Total: 1, Available: 0, End: "2026-01-01T03:00:00Z", Tags: map[string]string{}},
		{ID: "cr-open", Type: "m5.xlarge", Zone: "us-west-2b", ZoneID: "usw2-az2", Owner: "111122223333", State: "active", Criteria: "open",
			ReservationType: "default", Total: 2, Available: 2, Tags: map[string]string{}},
		{ID: "cr-small", Type: "m5.large", Zone: "us-west-2a", ZoneID: "usw2-az1", Owner: "111122223333", State: "active", Criteria: "targeted",
			ReservationType: "default", Total: 1, Available: 1, Tags: map[string]string{"team": "ml"}},
	}
	if diff := cmp.Diff(want, reservations(t, f, &ec2.DescribeCapacityReservationsInput{MaxResults: aws.Int32(1)})); diff != "" {
		t.Errorf("reservations (-want +got):\n%s", diff)
	}
	// Another account takes a slot: EC2 reports it at once.
	f.clock.Step(time.Minute)
	got := reservations(t, f, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{"cr-open"}})
	if len(got) != 1 || got[0].Available != 1 {
		t.Errorf("after another account's use: %+v", got)
	}
	for _, tc := range []struct {
		name    string
		filters []ec2types.Filter
		want    []string
	}{
		{"tag", []ec2types.Filter{filter("tag:team", "ml")}, []string{"cr-small"}},
		{"state and owner", []ec2types.Filter{filter("state", "active"), filter("owner-id", "111122223333")}, []string{"cr-open", "cr-small"}},
		{"match criteria", []ec2types.Filter{filter("instance-match-criteria", "open")}, []string{"cr-open"}},
		{"type", []ec2types.Filter{filter("instance-type", "p5.*")}, []string{"cr-block"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ids []string
			for _, r := range reservations(t, f, &ec2.DescribeCapacityReservationsInput{Filters: tc.filters}) {
				ids = append(ids, r.ID)
			}
			if diff := cmp.Diff(tc.want, ids); diff != "" {
				t.Errorf("reservations (-want +got):\n%s", diff)
			}
		})
	}
	_, err := f.client.DescribeCapacityReservations(context.Background(), &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{"cr-nope"}})
	if code := apiCode(t, err); code != "InvalidCapacityReservationId.NotFound" {
		t.Errorf("unknown reservation: %q", code)
	}
}
