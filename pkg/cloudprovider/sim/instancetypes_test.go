package sim_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestOfferingsAndPrices(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	its, err := f.cloud.GetInstanceTypes(context.Background(), test.NodePool())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*cloudprovider.InstanceType{}
	minOther := 1e9
	for _, it := range its {
		byName[it.Name] = it
		for _, o := range it.Offerings {
			if o.CapacityType != v1.CapacityTypeReserved {
				minOther = min(minOther, o.Price)
			}
		}
	}
	var small, big float64
	for name, p := range map[string]*float64{"m5.large": &small, "m5.2xlarge": &big} {
		for _, o := range byName[name].Offerings {
			if o.CapacityType == v1.CapacityTypeReserved {
				*p = o.Price
				if o.Available < 1 {
					t.Errorf("%s reserved offering has %d free", name, o.Available)
				}
			}
		}
	}
	if small == 0 || big == 0 || small >= minOther || big >= minOther || small >= big {
		t.Errorf("reserved prices small %v big %v must be above 0, below every other offering (%v) and grow with size", small, big, minOther)
	}
	for _, o := range byName["c5.xlarge"].Offerings {
		if o.CapacityType == v1.CapacityTypeReserved {
			t.Errorf("c5.xlarge has a reserved offering without a reservation")
		}
	}
	od, spot := 0.0, 0.0
	for _, o := range byName["c5.xlarge"].Offerings {
		if o.Zone == "us-west-2a" && o.CapacityType == v1.CapacityTypeOnDemand {
			od = o.Price
		}
		if o.Zone == "us-west-2a" && o.CapacityType == v1.CapacityTypeSpot {
			spot = o.Price
		}
	}
	if !(spot > 0 && spot < od) {
		t.Errorf("spot %v should be a discount off on-demand %v", spot, od)
	}
}

func TestReservationExpiryAndExternalUse(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
		s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: simv1alpha1.EventReservationConsumedExternally, ReservationID: "cr-big", Count: ptr.To(1)}}
	}))
	reserved := func() int {
		its, _ := f.cloud.GetInstanceTypes(context.Background(), test.NodePool())
		for _, it := range its {
			for _, o := range it.Offerings {
				if o.ReservationID == "cr-big" {
					return o.Available
				}
			}
		}
		return -1
	}
	if got := reserved(); got != 2 {
		t.Errorf("free slots %d, want 2", got)
	}
	f.clock.Step(time.Minute)
	if got := reserved(); got != 1 {
		t.Errorf("after another account took one: %d, want 1", got)
	}
	f.clock.Step(time.Hour)
	if got := reserved(); got != -1 {
		t.Errorf("after the end time the reservation is still offered (%d)", got)
	}
}

// Every offering, and so every node, carries its zone's ID, whether the
// profile names the IDs or leaves them to the default.
func TestOfferingsCarryZoneIDs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile *simv1alpha1.CloudProfile
		want    map[string]string
	}{
		{"default IDs", profile(simv1alpha1.CloudStyleAWS), map[string]string{"us-west-2a": "usw2-az1", "us-west-2b": "usw2-az2"}},
		{"explicit IDs", profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
			s.ZoneIDs = map[string]string{"us-west-2a": "usw2-az3", "us-west-2b": "usw2-az1"}
		}), map[string]string{"us-west-2a": "usw2-az3", "us-west-2b": "usw2-az1"}},
		{"gcp style", profile(simv1alpha1.CloudStyleGCP, func(s *simv1alpha1.CloudProfileSpec) {
			s.Zones, s.Reservations = []string{"us-west1-a", "us-west1-c"}, nil
		}), map[string]string{"us-west1-a": "usw2-az1", "us-west1-c": "usw2-az3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.profile)
			its, err := f.cloud.GetInstanceTypes(context.Background(), test.NodePool())
			if err != nil {
				t.Fatal(err)
			}
			ids := slices.Sorted(maps.Values(tc.want))
			for _, it := range its {
				if r := it.Requirements.Get(v1.LabelZoneID); r.Operator() != corev1.NodeSelectorOpIn || !slices.Equal(slices.Sorted(slices.Values(r.Values())), ids) {
					t.Fatalf("%s requires zone id %s, want In %v", it.Name, r, ids)
				}
				for _, o := range it.Offerings {
					if o.ZoneID != tc.want[o.Zone] {
						t.Errorf("%s offering %s has zone id %q, want %q", it.Name, o, o.ZoneID, tc.want[o.Zone])
					}
					if got := o.Requirements().Get(v1.LabelZoneID); got.Len() != 1 || !got.Has(tc.want[o.Zone]) {
						t.Errorf("%s offering %s requires zone id %s, want %s", it.Name, o, got, tc.want[o.Zone])
					}
				}
			}
		})
	}
}
