package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestReservationCounts(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		r                     sim.Reservation
		available, advertised int
	}{
		{"unused", sim.Reservation{Total: 3}, 3, 3},
		{"own launches count at once", sim.Reservation{Total: 3, Used: 2}, 1, 1},
		{"external use not yet seen", sim.Reservation{Total: 3, Used: 1, External: 2}, 0, 2},
		{"external use seen", sim.Reservation{Total: 3, Used: 1, External: 2, ExternalSeen: 2}, 0, 0},
		{"never below zero", sim.Reservation{Total: 2, Used: 2, External: 2, ExternalSeen: 1}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Available(); got != tc.available {
				t.Errorf("Available() = %d, want %d", got, tc.available)
			}
			if got := tc.r.Advertised(); got != tc.advertised {
				t.Errorf("Advertised() = %d, want %d", got, tc.advertised)
			}
		})
	}
}

// externalProfile adds cr-ext, three m5.large slots in us-west-2b that the
// default SimNodeClass selects, and another account taking two of them at
// each of consumedAt.
func externalProfile(consumedAt ...time.Duration) *simv1alpha1.CloudProfile {
	return profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
		s.Reservations = append(s.Reservations, simv1alpha1.Reservation{ID: "cr-ext", InstanceType: "m5.large", Zone: "us-west-2b", Count: 3,
			Type: simv1alpha1.ReservationTypeTargeted, OwnerID: "111122223333", Tags: map[string]string{"team": "ml"}})
		for _, at := range consumedAt {
			s.Events = append(s.Events, simv1alpha1.CloudEvent{At: metav1.Duration{Duration: at},
				Type: simv1alpha1.EventReservationConsumedExternally, ReservationID: "cr-ext", Count: ptr.To(2)})
		}
	})
}

// advertised is the free slots cr-ext's offering advertises, -1 when none.
func advertised(t *testing.T, f *fixture) int {
	t.Helper()
	its, err := f.cloud.GetInstanceTypes(context.Background(), test.NodePool())
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range its {
		for _, o := range it.Offerings {
			if o.ReservationID == "cr-ext" {
				return o.Available
			}
		}
	}
	return -1
}

// Other accounts' use shows at the first periodic refresh at or after it,
// which sees the events due by its own time, however late the clock is
// read.
func TestExternalUseShowsAtTheNextRefresh(t *testing.T) {
	for _, tc := range []struct {
		name       string
		consumedAt time.Duration
		// advertised after the clock reaches each offset, in order.
		at   []time.Duration
		want []int
	}{
		{"stale until the minute", 30 * time.Second,
			[]time.Duration{29 * time.Second, 30 * time.Second, 59 * time.Second, time.Minute},
			[]int{3, 3, 3, 1}},
		{"due at a refresh: seen by it", time.Minute,
			[]time.Duration{59 * time.Second, time.Minute},
			[]int{3, 1}},
		{"a late read does not see past the last refresh", 70 * time.Second,
			[]time.Duration{90 * time.Second, 119 * time.Second, 2 * time.Minute},
			[]int{3, 3, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, externalProfile(tc.consumedAt))
			start := f.clock.Now()
			var got []int
			for _, at := range tc.at {
				f.clock.SetTime(start.Add(at))
				got = append(got, advertised(t, f))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("advertised free slots (-want +got):\n%s", diff)
			}
		})
	}
}

// A launch into a reservation another account has filled since the last
// refresh fails with ReservationCapacityExceeded naming the offering, and
// the failure is how the account learns: the offering advertises the true
// count at once, and the state file keeps it.
func TestLaunchFailureRevealsExternalUse(t *testing.T) {
	f := newFixture(t, externalProfile(30*time.Second))
	ctx := context.Background()
	booked := func(name string) *v1.NodeClaim {
		return claim(name, in(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved), in(v1.LabelCapacityReservationID, "cr-ext"))
	}
	if _, err := f.cloud.Create(ctx, booked("nc-0")); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(30 * time.Second)
	if got := advertised(t, f); got != 2 {
		t.Fatalf("before the account learns: %d free advertised, want 2", got)
	}
	_, err := f.cloud.Create(ctx, booked("nc-1"))
	ice, ok := cloudprovider.AsInsufficientCapacityError(err)
	if !ok {
		t.Fatalf("launch into the externally filled reservation: %v, want insufficient capacity", err)
	}
	want := map[cloudprovider.OfferingKey]string{{CapacityType: "reserved", InstanceType: "m5.large", Zone: "us-west-2b", ReservationID: "cr-ext"}: "ReservationCapacityExceeded"}
	if diff := cmp.Diff(want, ice.Reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	if got := advertised(t, f); got != 0 {
		t.Errorf("after the failure: %d free advertised, want 0", got)
	}
	s, err := sim.LoadState(f.state)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Reservations["cr-ext"]; r.Used != 1 || r.External != 2 || r.ExternalSeen != 2 {
		t.Errorf("state file: used %d, external %d, seen %d; want 1, 2, 2", r.Used, r.External, r.ExternalSeen)
	}
}

// Another account takes only the slots this one does not hold.
func TestExternalUseTakesOnlyFreeSlots(t *testing.T) {
	f := newFixture(t, externalProfile(30*time.Second))
	ctx := context.Background()
	for _, name := range []string{"nc-0", "nc-1"} {
		if _, err := f.cloud.Create(ctx, claim(name, in(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved), in(v1.LabelCapacityReservationID, "cr-ext"))); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Step(time.Minute)
	r := f.cloud.Snapshot().Reservations["cr-ext"]
	if r.Used != 2 || r.External != 1 {
		t.Errorf("used %d, external %d; want 2 and the 1 free slot", r.Used, r.External)
	}
}
