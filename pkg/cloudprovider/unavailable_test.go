package cloudprovider_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// epoch is when every test clock starts.
func epoch() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

func spotKey(it, zone string) cloudprovider.OfferingKey {
	return cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: it, Zone: zone}
}

func onDemandKey(it, zone string) cloudprovider.OfferingKey {
	return cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeOnDemand, InstanceType: it, Zone: zone}
}

// instanceType returns a 2-CPU type with spot and on-demand offerings in
// zones a and b, plus a reservation in zone a.
func instanceType(name string) *cloudprovider.InstanceType {
	return &cloudprovider.InstanceType{
		Name:         name,
		Requirements: scheduling.NewRequirements(scheduling.NewRequirement(v1.LabelInstanceType, corev1.NodeSelectorOpIn, name)),
		Capacity:     corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		Offerings: cloudprovider.Offerings{
			{Zone: "a", CapacityType: v1.CapacityTypeSpot, Price: 0.03, Available: cloudprovider.Unlimited},
			{Zone: "b", CapacityType: v1.CapacityTypeSpot, Price: 0.04, Available: cloudprovider.Unlimited},
			{Zone: "a", CapacityType: v1.CapacityTypeOnDemand, Price: 0.1, Available: cloudprovider.Unlimited},
			{Zone: "b", CapacityType: v1.CapacityTypeOnDemand, Price: 0.1, Available: cloudprovider.Unlimited},
			{Zone: "a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1", Price: 1e-8, Available: 2},
		},
	}
}

// availability lists every offering's Available count by key.
func availability(its []*cloudprovider.InstanceType) map[cloudprovider.OfferingKey]int {
	out := map[cloudprovider.OfferingKey]int{}
	for _, it := range its {
		for _, o := range it.Offerings {
			out[o.Key(it.Name)] = o.Available
		}
	}
	return out
}

func TestOfferingKeyString(t *testing.T) {
	cases := []struct {
		key  cloudprovider.OfferingKey
		want string
	}{
		{spotKey("m5.large", "us-east-1a"), "spot/m5.large/us-east-1a"},
		{cloudprovider.OfferingKey{CapacityType: "reserved", InstanceType: "p5.48xlarge", Zone: "z", ReservationID: "cr-1"}, "reserved/p5.48xlarge/z/cr-1"},
	}
	for _, tc := range cases {
		if got := tc.key.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestUnavailableOfferingsTTL(t *testing.T) {
	cases := []struct {
		name  string
		ttl   time.Duration
		still time.Duration // unavailable this long after the mark
		gone  time.Duration // available again this long after the mark
	}{
		{"default", cloudprovider.DefaultUnavailableOfferingsTTL, 2*time.Minute + 59*time.Second, 3*time.Minute + time.Second},
		{"zero means default", 0, 2*time.Minute + 59*time.Second, 3*time.Minute + time.Second},
		{"custom", 30 * time.Second, 29 * time.Second, 31 * time.Second},
		{"expires exactly at the TTL", 10 * time.Second, 10*time.Second - time.Nanosecond, 10 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(epoch())
			u := cloudprovider.NewUnavailableOfferings(clk, tc.ttl)
			key := spotKey("m5.large", "a")
			u.MarkUnavailable(key, "InsufficientInstanceCapacity")
			if !u.IsUnavailable(key) {
				t.Fatal("not unavailable right after the mark")
			}
			if u.IsUnavailable(spotKey("m5.large", "b")) {
				t.Error("another zone is unavailable")
			}
			clk.SetTime(epoch().Add(tc.still))
			if !u.IsUnavailable(key) {
				t.Errorf("available after %s", tc.still)
			}
			clk.SetTime(epoch().Add(tc.gone))
			if u.IsUnavailable(key) {
				t.Errorf("still unavailable after %s", tc.gone)
			}
			if _, ok := u.Reason(key); ok {
				t.Error("Reason reports an expired mark")
			}
		})
	}
}

func TestUnavailableOfferingsRemarkExtends(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch())
	u := cloudprovider.NewUnavailableOfferings(clk, time.Minute)
	key := spotKey("m5.large", "a")
	u.MarkUnavailable(key, "first")
	clk.Step(50 * time.Second)
	u.MarkUnavailable(key, "second")
	clk.Step(50 * time.Second)
	reason, ok := u.Reason(key)
	if !ok || reason != "second" {
		t.Errorf("Reason() = %q, %v; want the second mark, still unavailable", reason, ok)
	}
}

func TestUnavailableOfferingsSeqNum(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch())
	u := cloudprovider.NewUnavailableOfferings(clk, time.Minute)
	seq := u.SeqNum()
	expect := func(step string, changed bool) {
		t.Helper()
		got := u.SeqNum()
		switch {
		case changed && got <= seq:
			t.Errorf("%s: SeqNum %d, want more than %d", step, got, seq)
		case !changed && got != seq:
			t.Errorf("%s: SeqNum %d, want unchanged %d", step, got, seq)
		}
		seq = got
	}
	expect("new", false)
	u.MarkUnavailable(spotKey("m5.large", "a"), "x")
	expect("mark", true)
	u.MarkUnavailable(spotKey("m5.large", "a"), "x")
	expect("mark again", true)
	clk.Step(30 * time.Second)
	u.MarkCapacityTypeUnavailable(v1.CapacityTypeSpot, "x")
	expect("capacity-type mark", true)
	u.IsUnavailable(spotKey("m5.large", "a"))
	u.Apply([]*cloudprovider.InstanceType{instanceType("m5.large")})
	expect("reads", false)
	clk.Step(31 * time.Second) // the offering mark expires
	expect("first expiry observed by SeqNum", true)
	u.IsUnavailable(spotKey("m5.large", "a"))
	expect("already observed", false)
	clk.Step(30 * time.Second) // the capacity-type mark expires
	u.Cleanup()
	if got := u.SeqNum(); got <= seq {
		t.Errorf("Cleanup of an expired mark: SeqNum %d, want more than %d", got, seq)
	}
	seq = u.SeqNum()
	clk.Step(time.Hour)
	u.Cleanup()
	expect("nothing left to expire", false)
	if n := u.MarkFromError(errors.New("boom")); n != 0 {
		t.Errorf("MarkFromError(other) = %d", n)
	}
	expect("MarkFromError of another error", false)
}

func TestUnavailableOfferingsCapacityTypeWide(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch())
	u := cloudprovider.NewUnavailableOfferings(clk, 0)
	u.MarkCapacityTypeUnavailable(v1.CapacityTypeSpot, "MaxSpotInstanceCountExceeded")
	its := []*cloudprovider.InstanceType{instanceType("m5.large"), instanceType("c5.large")}
	for key := range availability(its) {
		want := key.CapacityType == v1.CapacityTypeSpot
		if got := u.IsUnavailable(key); got != want {
			t.Errorf("IsUnavailable(%s) = %v, want %v", key, got, want)
		}
	}
	if reason, _ := u.Reason(spotKey("c5.large", "b")); reason != "MaxSpotInstanceCountExceeded" {
		t.Errorf("Reason = %q", reason)
	}
	clk.Step(cloudprovider.DefaultUnavailableOfferingsTTL)
	if u.IsUnavailable(spotKey("m5.large", "a")) {
		t.Error("capacity-type mark did not expire")
	}
}

func TestUnavailableOfferingsMarkFromError(t *testing.T) {
	ice := cloudprovider.NewInsufficientCapacityError(errors.New("cloud says no"))
	ice.Add(spotKey("m5.large", "a"), string(cloudprovider.CodeInsufficientInstanceCapacity))
	ice.Add(spotKey("c5.large", "b"), string(cloudprovider.CodeMaxSpotInstanceCountExceeded))
	ice.Add(onDemandKey("m5.large", "b"), "")
	reserved := cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeReserved, InstanceType: "m5.large", Zone: "a", ReservationID: "cr-1"}
	ice.Add(reserved, string(cloudprovider.CodeReservationCapacityExceeded))

	cases := []struct {
		name      string
		err       error
		wantMarks int
		want      map[cloudprovider.OfferingKey]string // unavailable keys and reasons
	}{
		{"nil", nil, 0, map[cloudprovider.OfferingKey]string{}},
		{"other error", errors.New("throttled"), 0, map[cloudprovider.OfferingKey]string{}},
		{"create error", cloudprovider.NewCreateError("Bad", nil), 0, map[cloudprovider.OfferingKey]string{}},
		{"wrapped insufficient capacity", fmt.Errorf("launching nodeclaim x, %w", ice), 5, map[cloudprovider.OfferingKey]string{
			spotKey("m5.large", "a"):     "InsufficientInstanceCapacity", // its own mark wins
			spotKey("c5.large", "b"):     "MaxSpotInstanceCountExceeded",
			spotKey("m5.large", "b"):     "MaxSpotInstanceCountExceeded", // spot is marked account-wide
			spotKey("c5.large", "a"):     "MaxSpotInstanceCountExceeded",
			onDemandKey("m5.large", "b"): "InsufficientCapacity", // no reason given
			reserved:                     "ReservationCapacityExceeded",
		}},
		{"a refusal beside capacity errors still marks them", cloudprovider.NewLaunchError([]cloudprovider.OfferingError{
			{Offering: spotKey("m5.large", "a"), Code: string(cloudprovider.CodeInsufficientInstanceCapacity)},
			{Offering: onDemandKey("m5.large", "b"), Code: string(cloudprovider.CodeUnauthorizedOperation)},
		}, nil), 1, map[cloudprovider.OfferingKey]string{spotKey("m5.large", "a"): "InsufficientInstanceCapacity"}},
		{"the spot service-linked role marks spot account-wide", cloudprovider.NewLaunchError([]cloudprovider.OfferingError{
			{Offering: spotKey("c5.large", "b"), Code: string(cloudprovider.CodeServiceLinkedRoleCreationNotPermitted)},
		}, nil), 2, map[cloudprovider.OfferingKey]string{
			spotKey("m5.large", "a"): "AuthFailure.ServiceLinkedRoleCreationNotPermitted", spotKey("m5.large", "b"): "AuthFailure.ServiceLinkedRoleCreationNotPermitted",
			spotKey("c5.large", "a"): "AuthFailure.ServiceLinkedRoleCreationNotPermitted", spotKey("c5.large", "b"): "AuthFailure.ServiceLinkedRoleCreationNotPermitted",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := cloudprovider.NewUnavailableOfferings(clocktesting.NewFakeClock(epoch()), 0)
			if got := u.MarkFromError(tc.err); got != tc.wantMarks {
				t.Errorf("MarkFromError() = %d, want %d", got, tc.wantMarks)
			}
			got := map[cloudprovider.OfferingKey]string{}
			for key := range availability([]*cloudprovider.InstanceType{instanceType("m5.large"), instanceType("c5.large")}) {
				if reason, ok := u.Reason(key); ok {
					got[key] = reason
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unavailable offerings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnavailableOfferingsMarkFromErrorOwnReasonWins(t *testing.T) {
	// An offering's own mark explains it better than the account-wide one.
	ice := cloudprovider.NewInsufficientCapacityError(nil)
	ice.Add(spotKey("m5.large", "a"), string(cloudprovider.CodeSpotMaxPriceTooLow))
	ice.AddCapacityTypeWide(v1.CapacityTypeSpot)
	u := cloudprovider.NewUnavailableOfferings(clocktesting.NewFakeClock(epoch()), 0)
	if n := u.MarkFromError(ice); n != 2 {
		t.Errorf("MarkFromError() = %d, want 2", n)
	}
	if reason, _ := u.Reason(spotKey("m5.large", "a")); reason != "SpotMaxPriceTooLow" {
		t.Errorf("Reason = %q", reason)
	}
}

func TestUnavailableOfferingsApply(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch())
	u := cloudprovider.NewUnavailableOfferings(clk, time.Minute)
	m5, c5 := instanceType("m5.large"), instanceType("c5.large")
	in := []*cloudprovider.InstanceType{m5, c5}
	before := availability(in)

	if got := u.Apply(in); got[0] != m5 || got[1] != c5 {
		t.Error("Apply with nothing marked copied instance types")
	}

	u.MarkUnavailable(spotKey("m5.large", "a"), "x")
	u.MarkUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeReserved, InstanceType: "m5.large", Zone: "a", ReservationID: "cr-1"}, "x")
	u.MarkUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeReserved, InstanceType: "c5.large", Zone: "a", ReservationID: "cr-other"}, "x")
	got := u.Apply(in)

	want := availability(in)
	want[spotKey("m5.large", "a")] = 0
	want[cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeReserved, InstanceType: "m5.large", Zone: "a", ReservationID: "cr-1"}] = 0
	if diff := cmp.Diff(want, availability(got)); diff != "" {
		t.Errorf("availability (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, availability(in)); diff != "" {
		t.Errorf("Apply mutated its input (-before +after):\n%s", diff)
	}
	if got[0] == m5 {
		t.Error("an affected instance type was not copied")
	}
	if got[1] != c5 {
		t.Error("an unaffected instance type was copied")
	}
	if got[0].Offerings[1] != m5.Offerings[1] {
		t.Error("an unaffected offering was copied")
	}

	clk.Step(time.Minute)
	if diff := cmp.Diff(before, availability(u.Apply(in))); diff != "" {
		t.Errorf("expired marks still applied (-want +got):\n%s", diff)
	}
}

func TestUnavailableOfferingsConcurrent(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch())
	u := cloudprovider.NewUnavailableOfferings(clk, time.Second)
	its := []*cloudprovider.InstanceType{instanceType("m5.large")}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				u.MarkUnavailable(spotKey("m5.large", fmt.Sprint(j%3)), "x")
				u.IsUnavailable(spotKey("m5.large", "a"))
				u.Apply(its)
				u.SeqNum()
				if i == 0 && j%50 == 0 {
					clk.Step(time.Second)
				}
			}
		})
	}
	wg.Wait()
	if u.SeqNum() < 8*200 {
		t.Errorf("SeqNum %d below the number of marks", u.SeqNum())
	}
}

func TestMarksListWhatIsInForce(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch())
	u := cloudprovider.NewUnavailableOfferings(clk, time.Minute)
	u.MarkUnavailable(spotKey("m5.large", "zone-b"), "InsufficientInstanceCapacity")
	u.MarkUnavailable(spotKey("c5.large", "zone-a"), "SpotMaxPriceTooLow")
	clk.Step(30 * time.Second)
	u.MarkCapacityTypeUnavailable(v1.CapacityTypeSpot, "MaxSpotInstanceCountExceeded")
	want := []cloudprovider.Mark{
		{Offering: cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot}, Reason: "MaxSpotInstanceCountExceeded", Until: epoch().Add(90 * time.Second)},
		{Offering: spotKey("c5.large", "zone-a"), Reason: "SpotMaxPriceTooLow", Until: epoch().Add(time.Minute)},
		{Offering: spotKey("m5.large", "zone-b"), Reason: "InsufficientInstanceCapacity", Until: epoch().Add(time.Minute)},
	}
	if diff := cmp.Diff(want, u.Marks()); diff != "" {
		t.Errorf("marks (-want +got):\n%s", diff)
	}
	clk.Step(45 * time.Second)
	if got := u.Marks(); len(got) != 1 || got[0].Offering.InstanceType != "" {
		t.Errorf("at 75s only the capacity-type mark is left: %v", got)
	}
}

// History remembers until when each offering and capacity type was last
// unavailable, after the marks expire.
func TestUnavailableHistory(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	start := clk.Now()
	u := cloudprovider.NewUnavailableOfferings(clk, 3*time.Minute)
	spotA := cloudprovider.OfferingKey{CapacityType: "spot", InstanceType: "m5.large", Zone: "a"}
	spotB := cloudprovider.OfferingKey{CapacityType: "spot", InstanceType: "m5.large", Zone: "b"}
	if got := u.History().Until(spotA); !got.IsZero() {
		t.Errorf("never marked: until %s", got)
	}
	u.MarkUnavailable(spotA, "InsufficientInstanceCapacity")
	clk.Step(time.Minute)
	u.MarkCapacityTypeUnavailable("spot", "MaxSpotInstanceCountExceeded")
	clk.Step(10 * time.Minute)
	u.Cleanup()
	h := u.History()
	if got, want := h.Until(spotA), start.Add(4*time.Minute); !got.Equal(want) {
		t.Errorf("spot a until %s, want %s (the capacity type's later mark)", got, want)
	}
	if got, want := h.Until(spotB), start.Add(4*time.Minute); !got.Equal(want) {
		t.Errorf("spot b until %s, want %s", got, want)
	}
	if got := h.Until(cloudprovider.OfferingKey{CapacityType: "on-demand", InstanceType: "m5.large", Zone: "a"}); !got.IsZero() {
		t.Errorf("on-demand until %s, want never", got)
	}
	// A history that starts later knows nothing of before.
	h.Since = start.Add(20 * time.Minute)
	if got := h.Until(cloudprovider.OfferingKey{CapacityType: "on-demand", InstanceType: "m5.large", Zone: "a"}); !got.Equal(h.Since) {
		t.Errorf("on-demand until %s, want the history's start %s", got, h.Since)
	}
	if got := h.Until(spotA); !got.Equal(h.Since) {
		t.Errorf("spot a until %s, want the history's start %s, after its mark", got, h.Since)
	}
}

// History's finer points: an offering's own later mark wins over its
// capacity type's, a re-mark moves until on, MarkFromError records what
// it marks, reservations are told apart, and a History is a copy that
// later marks do not reach.
func TestUnavailableHistoryDetails(t *testing.T) {
	ttl := 3 * time.Minute
	at := func(d time.Duration) time.Time { return epoch().Add(d) }
	reservedKey := func(id string) cloudprovider.OfferingKey {
		return cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeReserved, InstanceType: "m5.large", Zone: "a", ReservationID: id}
	}
	if got := (cloudprovider.UnavailableHistory{}).Until(spotKey("m5.large", "a")); !got.IsZero() {
		t.Errorf("the zero History: until %s, want never", got)
	}

	clk := clocktesting.NewFakeClock(epoch())
	u := cloudprovider.NewUnavailableOfferings(clk, ttl)
	u.MarkCapacityTypeUnavailable(v1.CapacityTypeSpot, "MaxSpotInstanceCountExceeded") // spot until 3m
	clk.Step(time.Minute)
	u.MarkUnavailable(spotKey("m5.large", "a"), "InsufficientInstanceCapacity") // until 4m
	u.MarkUnavailable(spotKey("c5.large", "a"), "InsufficientInstanceCapacity") // until 4m ...
	clk.Step(time.Minute)
	u.MarkUnavailable(spotKey("c5.large", "a"), "InsufficientInstanceCapacity") // ... moved to 5m
	before := u.History()
	ice := cloudprovider.NewInsufficientCapacityError(errors.New("cloud says no"))
	ice.Add(onDemandKey("m5.large", "b"), string(cloudprovider.CodeInsufficientInstanceCapacity))
	ice.Add(reservedKey("cr-1"), string(cloudprovider.CodeReservationCapacityExceeded))
	clk.Step(time.Minute)
	if n := u.MarkFromError(ice); n != 2 { // until 6m
		t.Fatalf("MarkFromError() = %d, want 2", n)
	}
	clk.Step(time.Hour)
	u.Cleanup()
	after := u.History()

	cases := []struct {
		name string
		h    cloudprovider.UnavailableHistory
		key  cloudprovider.OfferingKey
		want time.Time
	}{
		{"own mark later than the capacity type's", after, spotKey("m5.large", "a"), at(4 * time.Minute)},
		{"only the capacity type's", after, spotKey("m5.large", "b"), at(3 * time.Minute)},
		{"a re-mark moves until on", after, spotKey("c5.large", "a"), at(5 * time.Minute)},
		{"marked by MarkFromError", after, onDemandKey("m5.large", "b"), at(6 * time.Minute)},
		{"a reservation marked by MarkFromError", after, reservedKey("cr-1"), at(6 * time.Minute)},
		{"another reservation of the same type and zone", after, reservedKey("cr-2"), time.Time{}},
		{"never marked", after, onDemandKey("m5.large", "a"), time.Time{}},
		{"a History taken before does not see later marks", before, onDemandKey("m5.large", "b"), time.Time{}},
		{"nor has the reservation", before, reservedKey("cr-1"), time.Time{}},
		{"but has what was marked then", before, spotKey("c5.large", "a"), at(5 * time.Minute)},
	}
	for _, tc := range cases {
		if got := tc.h.Until(tc.key); !got.Equal(tc.want) {
			t.Errorf("%s: Until(%s) = %s, want %s", tc.name, tc.key, got, tc.want)
		}
	}
	if diff := cmp.Diff(map[string]time.Time{v1.CapacityTypeSpot: at(3 * time.Minute)}, after.CapacityTypes); diff != "" {
		t.Errorf("capacity types (-want +got):\n%s", diff)
	}

	// Editing a History does not edit the cache's.
	after.Offerings[spotKey("m5.large", "a")] = at(10 * time.Hour)
	after.CapacityTypes[v1.CapacityTypeOnDemand] = at(10 * time.Hour)
	again := u.History()
	if got := again.Until(spotKey("m5.large", "a")); !got.Equal(at(4 * time.Minute)) {
		t.Errorf("after editing a copy: until %s, want %s", got, at(4*time.Minute))
	}
	if _, ok := again.CapacityTypes[v1.CapacityTypeOnDemand]; ok {
		t.Error("a capacity type added to a copy reached the cache")
	}
}
