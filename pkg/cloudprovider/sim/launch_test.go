package sim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

func TestLaunchPrefersReservedThenSpotAndNeverOverbooks(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	ctx := context.Background()
	var got []string
	for i := range 3 {
		nc, err := f.cloud.Create(ctx, claim(fmt.Sprintf("nc-%d", i), in(v1.LabelInstanceType, "m5.large")))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, nc.Labels[v1.CapacityTypeLabelKey]+"/"+nc.Labels[v1.LabelCapacityReservationID])
	}
	if diff := cmp.Diff([]string{"reserved/cr-small", "spot/", "spot/"}, got); diff != "" {
		t.Errorf("launches (-want +got):\n%s", diff)
	}
	// A NodeClaim that insists on the full reservation fails with the
	// cloud's error code.
	_, err := f.cloud.Create(ctx, claim("nc-r", in(v1.LabelInstanceType, "m5.large"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved)))
	ice, ok := cloudprovider.AsInsufficientCapacityError(err)
	if !ok {
		t.Fatalf("want insufficient capacity, got %v", err)
	}
	if diff := cmp.Diff(map[cloudprovider.OfferingKey]string{{CapacityType: "reserved", InstanceType: "m5.large", Zone: "us-west-2a", ReservationID: "cr-small"}: "ReservationCapacityExceeded"}, ice.Reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	if s := f.cloud.Snapshot(); s.Reservations["cr-small"].Used != 1 {
		t.Errorf("reservation used %d, want 1", s.Reservations["cr-small"].Used)
	}
}

func TestSpotShortageNamesEveryOffering(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
		s.Capacity = []simv1alpha1.CapacityPool{
			{InstanceType: "c4.xlarge", Zone: "us-west-2a", CapacityType: v1.CapacityTypeSpot, Count: 0},
			{InstanceType: "c4.xlarge", Zone: "us-west-2b", CapacityType: v1.CapacityTypeSpot, Count: 0},
		}
	}))
	_, err := f.cloud.Create(context.Background(), claim("nc", in(v1.LabelInstanceType, "c4.xlarge"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand)))
	ice, ok := cloudprovider.AsInsufficientCapacityError(err)
	if !ok || len(ice.Offerings) != 2 {
		t.Fatalf("want both spot offerings named, got %v", err)
	}
	for _, k := range ice.Offerings {
		if ice.Reasons[k] != string(cloudprovider.CodeInsufficientInstanceCapacity) || k.CapacityType != v1.CapacityTypeSpot {
			t.Errorf("offering %s: %s", k, ice.Reasons[k])
		}
	}
	// Once marked, the retry goes on-demand.
	u := cloudprovider.NewUnavailableOfferings(f.clock, 0)
	u.MarkFromError(err)
	cat, _ := catalog.Load()
	cloud, _ := sim.New(sim.Options{Profile: f.profile, Catalog: cat, Clock: f.clock, NodeClasses: f.classes, Unavailable: u})
	nc, err := cloud.Create(context.Background(), claim("nc", in(v1.LabelInstanceType, "c4.xlarge"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand)))
	if err != nil || nc.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeOnDemand {
		t.Errorf("retry: %v %v", nc, err)
	}
}

func TestSpotMaxPrice(t *testing.T) {
	low := &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Spec: simv1alpha1.SimNodeClassSpec{SpotMaxPrice: ptr.To("0.001")}}
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS), low)
	nc := claim("nc", in(v1.LabelInstanceType, "c4.xlarge"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot))
	nc.Spec.NodeClassRef.Name = "low"
	_, err := f.cloud.Create(context.Background(), nc)
	ice, ok := cloudprovider.AsInsufficientCapacityError(err)
	if !ok || ice.Reasons[ice.Offerings[0]] != string(cloudprovider.CodeSpotMaxPriceTooLow) {
		t.Fatalf("want SpotMaxPriceTooLow, got %v", err)
	}
	// Unset, the on-demand price caps spot: the launch succeeds.
	if _, err := f.cloud.Create(context.Background(), claim("ok", in(v1.LabelInstanceType, "c4.xlarge"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot))); err != nil {
		t.Errorf("default max price: %v", err)
	}
}

func TestMaxSpotInstanceCount(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) { s.MaxSpotInstances = 1 }))
	ctx := context.Background()
	spot := func(name string) error {
		_, err := f.cloud.Create(ctx, claim(name, in(v1.LabelInstanceType, "c5.xlarge"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot)))
		return err
	}
	if err := spot("a"); err != nil {
		t.Fatal(err)
	}
	ice, ok := cloudprovider.AsInsufficientCapacityError(spot("b"))
	if !ok || ice.Reasons[ice.Offerings[0]] != string(cloudprovider.CodeMaxSpotInstanceCountExceeded) {
		t.Fatalf("want MaxSpotInstanceCountExceeded, got %v", ice)
	}
	u := cloudprovider.NewUnavailableOfferings(f.clock, 0)
	u.MarkFromError(ice)
	if !u.IsUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "m5.large", Zone: "us-west-2b"}) {
		t.Errorf("the account-wide spot limit must mark every spot offering")
	}
}

// A NodeClaim may pick its zone by ID alone: the instance, the NodeClaim
// Create returns and the Node the kubelet registers all carry the ID of
// the zone it launched in.
func TestLaunchCarriesZoneID(t *testing.T) {
	for _, tc := range []struct {
		name         string
		profile      *simv1alpha1.CloudProfile
		instanceType string
		zoneID       string
		want         string // the zone
	}{
		{"default ID", profile(simv1alpha1.CloudStyleAWS), "c5.xlarge", "usw2-az2", "us-west-2b"},
		{"explicit ID", profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
			s.ZoneIDs = map[string]string{"us-west-2a": "usw2-az4", "us-west-2b": "usw2-az1"}
		}), "c5.xlarge", "usw2-az4", "us-west-2a"},
		{"reserved", profile(simv1alpha1.CloudStyleAWS), "m5.large", "usw2-az1", "us-west-2a"}, // into cr-small
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.profile)
			nc, err := f.cloud.Create(context.Background(), claim("nc", in(v1.LabelInstanceType, tc.instanceType), in(v1.LabelZoneID, tc.zoneID)))
			if err != nil {
				t.Fatal(err)
			}
			if tc.instanceType == "m5.large" && nc.Labels[v1.LabelCapacityReservationID] != "cr-small" {
				t.Errorf("launched %s, want into cr-small", nc.Labels[v1.CapacityTypeLabelKey])
			}
			if nc.Labels[v1.LabelZone] != tc.want || nc.Labels[v1.LabelZoneID] != tc.zoneID {
				t.Errorf("launched into %s (%s), want %s (%s)", nc.Labels[v1.LabelZone], nc.Labels[v1.LabelZoneID], tc.want, tc.zoneID)
			}
			inst := f.cloud.Snapshot().Instances
			if len(inst) != 1 {
				t.Fatalf("%d instances, want 1", len(inst))
			}
			for _, i := range inst {
				if i.Labels[v1.LabelZoneID] != tc.zoneID {
					t.Errorf("instance labels %v, want zone id %s", i.Labels, tc.zoneID)
				}
			}
			nodes := f.kubelet.Due(f.clock.Now().Add(time.Hour))
			if len(nodes) != 1 || nodes[0].Labels[v1.LabelZoneID] != tc.zoneID {
				t.Fatalf("registered nodes %v, want one with zone id %s", nodes, tc.zoneID)
			}
			got, err := f.cloud.Get(context.Background(), nc.Status.ProviderID)
			if err != nil || got.Labels[v1.LabelZoneID] != tc.zoneID {
				t.Errorf("Get = %v, %v; want zone id %s", got, err, tc.zoneID)
			}
		})
	}
}

// A launch that succeeds after an offering failed for capacity marks that
// offering, as a failed launch's error would: c5.large, the cheaper
// on-demand type, has no capacity and m5.large launches.
func TestLaunchMarksCapacityErrorsBesideTheInstance(t *testing.T) {
	p := profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
		s.Capacity = []simv1alpha1.CapacityPool{{InstanceType: "c5.large", Zone: "us-west-2a", CapacityType: v1.CapacityTypeOnDemand, Count: 0}}
	})
	f := newFixture(t, p)
	u := cloudprovider.NewUnavailableOfferings(f.clock, 0)
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	cloud, err := sim.New(sim.Options{Profile: p, Catalog: cat, Clock: f.clock, NodeClasses: f.classes, Unavailable: u})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := cloud.Create(context.Background(), claim("nc", in(v1.LabelInstanceType, "c5.large", "m5.large"),
		in(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand), in(v1.LabelZone, "us-west-2a")))
	if err != nil {
		t.Fatal(err)
	}
	if got := nc.Labels[v1.LabelInstanceType]; got != "m5.large" {
		t.Fatalf("launched %s, want m5.large after c5.large failed", got)
	}
	key := cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeOnDemand, InstanceType: "c5.large", Zone: "us-west-2a"}
	if reason, ok := u.Reason(key); !ok || reason != string(cloudprovider.CodeInsufficientInstanceCapacity) {
		t.Errorf("%s marked %t (%q), want marked InsufficientInstanceCapacity", key, ok, reason)
	}
	if u.IsUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeOnDemand, InstanceType: "m5.large", Zone: "us-west-2a"}) {
		t.Error("the launched offering is marked unavailable")
	}
}
