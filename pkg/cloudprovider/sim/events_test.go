package sim_test

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

func TestInterruptionStyles(t *testing.T) {
	for _, tc := range []struct {
		style    simv1alpha1.CloudStyle
		policy   simv1alpha1.EvictionPolicy
		kind     cloudprovider.InterruptionKind
		notice   time.Duration
		endState sim.InstanceState
	}{
		{simv1alpha1.CloudStyleAWS, "", cloudprovider.SpotInterruption, 2 * time.Minute, sim.InstanceTerminated},
		{simv1alpha1.CloudStyleGCP, "", cloudprovider.SpotInterruption, 30 * time.Second, sim.InstanceTerminated},
		{simv1alpha1.CloudStyleAzure, simv1alpha1.EvictionPolicyDeallocate, cloudprovider.AzureEviction, 30 * time.Second, sim.InstanceStopped},
		{simv1alpha1.CloudStyleAzure, simv1alpha1.EvictionPolicyDelete, cloudprovider.AzureEviction, 30 * time.Second, sim.InstanceTerminated},
	} {
		t.Run(string(tc.style)+string(tc.policy), func(t *testing.T) {
			f := newFixture(t, profile(tc.style, func(s *simv1alpha1.CloudProfileSpec) {
				s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: 10 * time.Minute}, Type: simv1alpha1.EventSpotInterruption, InstanceType: "c5.xlarge", Zone: "us-west-2a"}}
			}))
			f.classes["default"].Spec.EvictionPolicy = tc.policy
			ctx := context.Background()
			nc, err := f.cloud.Create(ctx, claim("nc", in(v1.LabelInstanceType, "c5.xlarge"), in(v1.LabelZone, "us-west-2a"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot)))
			if err != nil {
				t.Fatal(err)
			}
			f.clock.Step(10 * time.Minute)
			// A GCP preemptible VM's 24-hour limit is reported from launch.
			notices, _ := f.cloud.Interruptions(ctx)
			notices = slices.DeleteFunc(notices, func(n cloudprovider.InterruptionNotice) bool { return n.Kind == cloudprovider.PreemptibleMaxLifetime })
			if len(notices) != 1 || notices[0].Kind != tc.kind || notices[0].ProviderID != nc.Status.ProviderID || notices[0].Deadline.Sub(f.clock.Now()) != tc.notice {
				t.Fatalf("notices %+v", notices)
			}
			f.clock.Step(tc.notice)
			s := f.cloud.Snapshot()
			for _, inst := range s.Instances {
				if inst.State != tc.endState {
					t.Errorf("instance %s after the deadline, want %s", inst.State, tc.endState)
				}
			}
			if notices, _ := f.cloud.Interruptions(ctx); len(notices) != 0 {
				t.Errorf("notices outlive the instance: %+v", notices)
			}
		})
	}
}

func TestGCPPreemptibleLimitAndSpotPriceAboveMax(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleGCP))
	ctx := context.Background()
	if _, err := f.cloud.Create(ctx, claim("nc", in(v1.LabelInstanceType, "c5.xlarge"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot))); err != nil {
		t.Fatal(err)
	}
	// The limit is known at launch, so it is reported from then on, until
	// the instance is gone.
	start := f.clock.Now()
	if n, _ := f.cloud.Interruptions(ctx); len(n) != 1 || n[0].Kind != cloudprovider.PreemptibleMaxLifetime || !n[0].Deadline.Equal(start.Add(24*time.Hour)) {
		t.Errorf("want the 24h-limit notice from launch, got %+v", n)
	}
	f.clock.Step(24 * time.Hour)
	if n, _ := f.cloud.Interruptions(ctx); len(n) != 0 {
		t.Errorf("notice outlives the preempted instance: %+v", n)
	}

	a := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
		s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: simv1alpha1.EventSpotPriceChange, InstanceType: "c5.xlarge", Zone: "*", Price: "9.99"}}
	}))
	if _, err := a.cloud.Create(ctx, claim("nc", in(v1.LabelInstanceType, "c5.xlarge"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot))); err != nil {
		t.Fatal(err)
	}
	a.clock.Step(time.Minute)
	n, _ := a.cloud.Interruptions(ctx)
	if len(n) != 1 || n[0].Kind != cloudprovider.SpotPriceAboveMax {
		t.Errorf("want a price interruption, got %+v", n)
	}
}

func TestNoticeKinds(t *testing.T) {
	for _, tc := range []struct {
		event    simv1alpha1.CloudEventType
		kind     cloudprovider.InterruptionKind
		deadline time.Duration
		end      sim.InstanceState
	}{
		{simv1alpha1.EventRebalanceRecommendation, cloudprovider.RebalanceRecommendation, 0, sim.InstanceRunning},
		{simv1alpha1.EventScheduledChange, cloudprovider.ScheduledChange, sim.ScheduledChangeNotice, sim.InstanceTerminated},
		{simv1alpha1.EventInstanceStopping, cloudprovider.InstanceStopping, 0, sim.InstanceStopped},
		{simv1alpha1.EventInstanceTerminating, cloudprovider.InstanceTerminating, 0, sim.InstanceTerminated},
	} {
		t.Run(string(tc.event), func(t *testing.T) {
			f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
				s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: tc.event, InstanceType: "c5.xlarge", Zone: "*"}}
			}))
			ctx := context.Background()
			if _, err := f.cloud.Create(ctx, claim("nc", in(v1.LabelInstanceType, "c5.xlarge"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot))); err != nil {
				t.Fatal(err)
			}
			f.clock.Step(time.Minute - time.Nanosecond)
			if n, _ := f.cloud.Interruptions(ctx); len(n) != 0 {
				t.Fatalf("notice before the event: %+v", n)
			}
			f.clock.Step(time.Nanosecond)
			n, _ := f.cloud.Interruptions(ctx)
			if tc.deadline == 0 && tc.end == sim.InstanceRunning {
				if len(n) != 1 || n[0].Kind != tc.kind || !n[0].Deadline.IsZero() {
					t.Fatalf("notices %+v", n)
				}
				return
			}
			if tc.deadline > 0 && (len(n) != 1 || n[0].Kind != tc.kind || n[0].Deadline.Sub(f.clock.Now()) != tc.deadline) {
				t.Fatalf("notices %+v", n)
			}
			f.clock.Step(tc.deadline)
			for _, inst := range f.cloud.Snapshot().Instances {
				if inst.State != tc.end {
					t.Errorf("instance %s, want %s", inst.State, tc.end)
				}
			}
		})
	}
}

func TestCapacityChangeEvent(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
		s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: simv1alpha1.EventCapacityChange, InstanceType: "c5.xlarge", Zone: "*", CapacityType: v1.CapacityTypeSpot, Count: ptr.To(0)}}
	}))
	ctx := context.Background()
	launch := func(name string) error {
		_, err := f.cloud.Create(ctx, claim(name, in(v1.LabelInstanceType, "c5.xlarge"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot)))
		return err
	}
	if err := launch("nc-1"); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(time.Minute)
	if err := launch("nc-2"); !cloudprovider.IsInsufficientCapacityError(err) {
		t.Errorf("after the pool emptied: %v", err)
	}
}

// The profile's spotNotice overrides the style's notice length (tests
// compress time with it).
func TestSpotNoticeOverride(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
		s.SpotNotice = metav1.Duration{Duration: 20 * time.Second}
		s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: simv1alpha1.EventSpotInterruption, InstanceType: "c5.xlarge", Zone: "us-west-2a"}}
	}))
	ctx := context.Background()
	if _, err := f.cloud.Create(ctx, claim("nc", in(v1.LabelInstanceType, "c5.xlarge"), in(v1.LabelZone, "us-west-2a"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot))); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(time.Minute)
	n, _ := f.cloud.Interruptions(ctx)
	if len(n) != 1 || n[0].Deadline.Sub(f.clock.Now()) != 20*time.Second {
		t.Errorf("notices %+v, want one 20s ahead", n)
	}
}

// When a reservation ends, its instances leave it and run on as
// on-demand at the on-demand price (seed 002); a capacity block's are
// announced ScheduledChangeNotice ahead and reclaimed at its end.
func TestReservationEnd(t *testing.T) {
	ctx := context.Background()
	reserved := func(f *fixture) *v1.NodeClaim {
		t.Helper()
		nc, err := f.cloud.Create(ctx, claim("nc", in(v1.LabelInstanceType, "m5.2xlarge"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved)))
		if err != nil {
			t.Fatal(err)
		}
		if nc.Labels[v1.LabelCapacityReservationID] != "cr-big" {
			t.Fatalf("launched into %q, want cr-big", nc.Labels[v1.LabelCapacityReservationID])
		}
		return nc
	}
	t.Run("relabelled on-demand", func(t *testing.T) {
		f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
		nc := reserved(f)
		f.clock.Step(time.Hour - time.Second)
		if got, _ := f.cloud.Get(ctx, nc.Status.ProviderID); got.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeReserved {
			t.Errorf("capacity type %q before the end", got.Labels[v1.CapacityTypeLabelKey])
		}
		f.clock.Step(time.Second)
		got, err := f.cloud.Get(ctx, nc.Status.ProviderID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeOnDemand || got.Labels[v1.LabelCapacityReservationID] != "" ||
			got.Labels[v1.LabelCapacityReservationType] != "" || got.Labels[v1.LabelCapacityReservationInterruptible] != "" {
			t.Errorf("labels after the end %v, want on-demand without a reservation id, type or interruptible", got.Labels)
		}
		for _, inst := range f.cloud.Snapshot().Instances {
			if inst.CapacityType != v1.CapacityTypeOnDemand || inst.ReservationID != "" || inst.Price <= 0.01 {
				t.Errorf("instance %+v, want on-demand at the on-demand price", inst)
			}
		}
		if n, _ := f.cloud.Interruptions(ctx); len(n) != 0 {
			t.Errorf("notices %+v: an ended reservation's instances run on", n)
		}
	})
	t.Run("capacity block reclaimed", func(t *testing.T) {
		f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) { s.Reservations[1].CapacityBlock = true }))
		nc := reserved(f)
		if got := nc.Labels[v1.LabelCapacityReservationType]; got != v1.ReservationTypeCapacityBlock {
			t.Errorf("reservation type label %q, want %s", got, v1.ReservationTypeCapacityBlock)
		}
		// The block is reclaimed at its end; its nodes are drained before.
		blocks, err := f.cloud.CapacityBlocks(ctx)
		if err != nil || len(blocks) != 1 || blocks[0].ID != nc.Labels[v1.LabelCapacityReservationID] || !blocks[0].Reclaim.Equal(f.clock.Now().Add(time.Hour)) {
			t.Errorf("capacity blocks %+v, %v; want the block, reclaimed in an hour", blocks, err)
		}
		f.clock.Step(time.Hour - sim.ScheduledChangeNotice - time.Second)
		if n, _ := f.cloud.Interruptions(ctx); len(n) != 0 {
			t.Errorf("notices %+v before the block's notice", n)
		}
		f.clock.Step(time.Second)
		// From its notice on, the block takes no launch: it would only
		// be reclaimed at once.
		if _, err := f.cloud.Create(ctx, claim("late", in(v1.LabelInstanceType, "m5.2xlarge"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved))); !cloudprovider.IsInsufficientCapacityError(err) {
			t.Errorf("launch into the ending block: %v, want insufficient capacity", err)
		}
		n, _ := f.cloud.Interruptions(ctx)
		if len(n) != 1 || n[0].Kind != cloudprovider.ScheduledChange || n[0].ProviderID != nc.Status.ProviderID || n[0].Deadline.Sub(f.clock.Now()) != sim.ScheduledChangeNotice {
			t.Fatalf("notices %+v, want a ScheduledChange for the block's end", n)
		}
		f.clock.Step(sim.ScheduledChangeNotice)
		if _, err := f.cloud.Get(ctx, nc.Status.ProviderID); !cloudprovider.IsNodeClaimNotFoundError(err) {
			t.Errorf("instance still there after the block ended: %v", err)
		}
	})
}

// Reregister has the kubelet register a running instance's Node again
// (its first registration died with the process that launched it), at
// the launch latency after the launch; a terminated instance's stays
// gone.
func TestReregister(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	ctx := context.Background()
	nc, err := f.cloud.Create(ctx, claim("nc", in(v1.LabelInstanceType, "c5.xlarge")))
	if err != nil {
		t.Fatal(err)
	}
	registerAt := f.clock.Now().Add(2 * time.Second)
	if got := f.kubelet.Due(registerAt); len(got) != 1 {
		t.Fatalf("first registration: %d nodes due, want 1", len(got))
	}
	f.clock.Step(time.Minute)
	if err := f.cloud.Reregister(ctx, nc); err != nil {
		t.Fatal(err)
	}
	got := f.kubelet.Due(f.clock.Now())
	if len(got) != 1 || got[0].Spec.ProviderID != nc.Status.ProviderID {
		t.Fatalf("registered again %+v, want the instance's node", got)
	}
	if err := f.cloud.Delete(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if err := f.cloud.Reregister(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if got := f.kubelet.Due(f.clock.Now().Add(time.Hour)); len(got) != 0 {
		t.Errorf("a terminated instance's node registered again: %+v", got)
	}
}
