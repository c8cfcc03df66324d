package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/test"
)

func launchRequest(ct string, a sim.Allocation, offerings ...sim.LaunchOffering) sim.LaunchRequest {
	return sim.LaunchRequest{NodeClaim: test.NodeClaim(func(nc *v1.NodeClaim) { nc.Name = "explicit" }), NodeClass: "default", CapacityType: ct, Allocation: a, Offerings: offerings}
}

func offering(instanceType, zone string) sim.LaunchOffering {
	return sim.LaunchOffering{InstanceType: instanceType, Zone: zone}
}

// launchResult is where a Launch went and what failed on the way.
type launchResult struct {
	Offering int
	Failed   map[string]string
}

func summarize(res sim.LaunchResult, err error) (launchResult, error) {
	out := launchResult{Offering: res.Offering}
	failed := res.Failed
	if le, ok := errors.AsType[*sim.LaunchError](err); ok {
		out.Offering, failed = -1, le.Failed
	} else if err != nil {
		return out, err
	}
	if failed != nil {
		out.Failed = map[string]string{}
		for _, f := range failed {
			out.Failed[f.Offering.String()] = f.Code
		}
	}
	return out, nil
}

func TestLaunchAllocations(t *testing.T) {
	// c5.large spot is 0.02 in us-west-2a, 0.03 in us-west-2b, and
	// m5.large 0.02 in both, with a shallow pool in us-west-2a.
	p := profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
		s.SpotPrices = []simv1alpha1.SpotPrice{
			{InstanceType: "c5.large", Zone: "us-west-2a", Price: "0.02"}, {InstanceType: "c5.large", Zone: "us-west-2b", Price: "0.03"},
			{InstanceType: "m5.large", Zone: "*", Price: "0.02"},
		}
		s.Capacity = []simv1alpha1.CapacityPool{
			{InstanceType: "c5.large", Zone: "us-west-2a", CapacityType: v1.CapacityTypeSpot, Count: 1},
			{InstanceType: "m5.large", Zone: "us-west-2b", CapacityType: v1.CapacityTypeSpot, Count: 0},
		}
	})
	spots := []sim.LaunchOffering{offering("c5.large", "us-west-2b"), offering("c5.large", "us-west-2a"), offering("m5.large", "us-west-2a"), offering("m5.large", "us-west-2b")}
	for _, tc := range []struct {
		name string
		req  sim.LaunchRequest
		want launchResult
	}{
		{"lowest price keeps the request's order among equals", launchRequest(v1.CapacityTypeSpot, sim.AllocationLowestPrice, spots...), launchResult{Offering: 1}},
		{"price-capacity-optimized takes the deeper of equal prices", launchRequest(v1.CapacityTypeSpot, sim.AllocationPriceCapacityOptimized, spots...), launchResult{Offering: 2}},
		{"capacity-optimized ignores price", launchRequest(v1.CapacityTypeSpot, sim.AllocationCapacityOptimized, spots...), launchResult{Offering: 0}},
		{"prioritized keeps the request's order", launchRequest(v1.CapacityTypeSpot, sim.AllocationPrioritized, spots[3], spots[1]),
			launchResult{Offering: 1, Failed: map[string]string{"spot/m5.large/us-west-2b": "InsufficientInstanceCapacity"}}},
		{"max price", func() sim.LaunchRequest {
			low := spots[1]
			low.MaxPrice = 0.01
			return launchRequest(v1.CapacityTypeSpot, sim.AllocationLowestPrice, low, spots[0])
		}(), launchResult{Offering: 1, Failed: map[string]string{"spot/c5.large/us-west-2a": "SpotMaxPriceTooLow"}}},
		{"what the cloud does not have", launchRequest(v1.CapacityTypeOnDemand, sim.AllocationLowestPrice, offering("x9.huge", "us-west-2a"), offering("c5.large", "us-west-2z")),
			launchResult{Offering: -1, Failed: map[string]string{"on-demand/x9.huge/us-west-2a": "Unsupported", "on-demand/c5.large/us-west-2z": "Unsupported"}}},
		{"a reservation for another type", launchRequest(v1.CapacityTypeReserved, sim.AllocationLowestPrice, sim.LaunchOffering{InstanceType: "c5.large", Zone: "us-west-2a", ReservationID: "cr-small"}),
			launchResult{Offering: -1, Failed: map[string]string{"reserved/c5.large/us-west-2a/cr-small": "Unsupported"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, p)
			got, err := summarize(f.cloud.Launch(context.Background(), tc.req))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("launch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLaunchIntoReservations(t *testing.T) {
	ctx := context.Background()
	reserved := sim.LaunchOffering{InstanceType: "m5.large", Zone: "us-west-2a", ReservationID: "cr-small"}
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	if _, err := f.cloud.Launch(ctx, launchRequest(v1.CapacityTypeReserved, sim.AllocationLowestPrice, reserved)); err != nil {
		t.Fatal(err)
	}
	got, err := summarize(f.cloud.Launch(ctx, launchRequest(v1.CapacityTypeReserved, sim.AllocationLowestPrice, reserved)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(launchResult{Offering: -1, Failed: map[string]string{"reserved/m5.large/us-west-2a/cr-small": "ReservationCapacityExceeded"}}, got); diff != "" {
		t.Errorf("the reservation's second launch (-want +got):\n%s", diff)
	}
	// cr-big (open, two m5.2xlarge in us-west-2a) takes on-demand
	// launches of its type when asked to.
	for _, tc := range []struct {
		name              string
		open, first       bool
		wantType, wantRes string
	}{
		{"not asked", false, false, "c5.large", ""},
		{"open: the cheaper type still wins", true, false, "c5.large", ""},
		{"reservations first", false, true, "m5.2xlarge", "cr-big"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
			req := launchRequest(v1.CapacityTypeOnDemand, sim.AllocationLowestPrice, offering("m5.2xlarge", "us-west-2a"), offering("c5.large", "us-west-2a"))
			req.OpenReservations, req.ReservationsFirst = tc.open, tc.first
			res, err := f.cloud.Launch(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Instance.InstanceType != tc.wantType || res.Instance.ReservationID != tc.wantRes {
				t.Errorf("launched %s into %q, want %s into %q", res.Instance.InstanceType, res.Instance.ReservationID, tc.wantType, tc.wantRes)
			}
		})
	}
}

// What a launch records outlives the cloud, and a spot price above the
// launch's own max price interrupts the instance.
func TestLaunchRecordsTagsAttributesAndMaxPrice(t *testing.T) {
	p := profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
		s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: simv1alpha1.EventSpotPriceChange, InstanceType: "c5.large", Zone: "*", Price: "0.05"}}
	})
	f := newFixture(t, p)
	ctx := context.Background()
	o := offering("c5.large", "us-west-2a")
	o.MaxPrice, o.Tags, o.Attributes = 0.04, map[string]string{"team": "a"}, map[string]string{"imageId": "ami-1"}
	req := launchRequest(v1.CapacityTypeSpot, sim.AllocationLowestPrice, o)
	req.Tags, req.Attributes = map[string]string{"team": "request", "cluster": "c"}, map[string]string{"subnetId": "subnet-1"}
	res, err := f.cloud.Launch(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := catalog.Load()
	again, err := sim.New(sim.Options{Profile: p, Catalog: cat, Clock: f.clock, StatePath: f.state, NodeClasses: f.classes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = again.Close() })
	inst := again.Snapshot().Instances[res.Instance.ID]
	if diff := cmp.Diff(map[string]string{"team": "a", "cluster": "c"}, inst.Tags); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"imageId": "ami-1", "subnetId": "subnet-1"}, inst.Attributes); diff != "" {
		t.Errorf("attributes (-want +got):\n%s", diff)
	}
	if inst.MaxPrice != 0.04 || inst.NodeClaim != "explicit" {
		t.Errorf("max price %g, nodeclaim %q", inst.MaxPrice, inst.NodeClaim)
	}
	f.clock.Step(time.Minute)
	notices, err := again.Interruptions(ctx)
	if err != nil || len(notices) != 1 || notices[0].Kind != cloudprovider.SpotPriceAboveMax {
		t.Errorf("notices %+v, %v", notices, err)
	}
}

func TestTerminateAndTagInstances(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	ctx := context.Background()
	res, err := f.cloud.Launch(ctx, launchRequest(v1.CapacityTypeOnDemand, sim.AllocationLowestPrice, offering("c5.large", "us-west-2a")))
	if err != nil {
		t.Fatal(err)
	}
	id := res.Instance.ID
	if err := f.cloud.TagInstances(ctx, []string{id}, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	if err := f.cloud.TagInstances(ctx, []string{id}, map[string]string{"b": "2"}); err != nil {
		t.Fatal(err)
	}
	if got := f.cloud.Snapshot().Instances[id].Tags; !cmp.Equal(got, map[string]string{"a": "1", "b": "2"}) {
		t.Errorf("tags %v", got)
	}
	for i, want := range []sim.InstanceState{sim.InstanceRunning, sim.InstanceTerminated} {
		before, err := f.cloud.TerminateInstances(ctx, []string{id})
		if err != nil || len(before) != 1 || before[0] != want {
			t.Errorf("termination %d: before %v, %v; want %s", i, before, err, want)
		}
	}
	var unknown *sim.UnknownInstanceError
	if _, err := f.cloud.TerminateInstances(ctx, []string{id, "i-0000000000ff"}); !errors.As(err, &unknown) || !cmp.Equal(unknown.IDs, []string{"i-0000000000ff"}) {
		t.Errorf("unknown instance: %v", err)
	}
	if err := f.cloud.TagInstances(ctx, []string{"i-0000000000ff"}, map[string]string{"a": "1"}); !errors.As(err, &unknown) {
		t.Errorf("tagging an unknown instance: %v", err)
	}
}

func TestPrices(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
		s.SpotPrices = []simv1alpha1.SpotPrice{{InstanceType: "c5.large", Zone: "us-west-2b", Price: "0.0123"}}
	}))
	prices, err := f.cloud.Prices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := catalog.Load()
	if len(prices) != 2*len(cat) {
		t.Errorf("%d prices, want %d", len(prices), 2*len(cat))
	}
	for _, p := range prices {
		if p.InstanceType != "c5.large" {
			continue
		}
		c5, _ := findType(cat, "c5.large")
		od, _ := c5.OnDemandPrice("us-west-2")
		spot, _ := c5.SpotPrice("us-west-2")
		if p.Zone == "us-west-2b" {
			spot = 0.0123
		}
		if p.OnDemand != od || p.Spot != spot {
			t.Errorf("%s in %s: %g/%g, want %g/%g", p.InstanceType, p.Zone, p.OnDemand, p.Spot, od, spot)
		}
	}
}

func findType(cat []catalog.InstanceType, name string) (catalog.InstanceType, bool) {
	for _, c := range cat {
		if c.Name == name {
			return c, true
		}
	}
	return catalog.InstanceType{}, false
}

// A cloud named another cloud's way registers Nodes and answers Get by
// that cloud's provider IDs.
func TestNaming(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	cat, _ := catalog.Load()
	kubelet := sim.NewMemoryKubelet()
	cloud, err := sim.New(sim.Options{Profile: f.profile, Catalog: cat, Clock: f.clock, NodeClasses: f.classes, Kubelet: kubelet, Naming: sim.Naming{
		ProviderID: func(i *sim.Instance) string { return "aws:///" + i.Zone + "/" + i.ID },
		NodeName:   func(i *sim.Instance) string { return "ip-" + i.ID[2:] },
	}})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := cloud.Create(context.Background(), claim("nc", in(v1.LabelInstanceType, "c5.large"), in(v1.LabelZone, "us-west-2a")))
	if err != nil {
		t.Fatal(err)
	}
	if nc.Status.ProviderID != "aws:///us-west-2a/i-000000000001" {
		t.Errorf("provider id %s", nc.Status.ProviderID)
	}
	nodes := kubelet.Due(f.clock.Now().Add(time.Hour))
	if len(nodes) != 1 || nodes[0].Name != "ip-000000000001" || nodes[0].Spec.ProviderID != nc.Status.ProviderID {
		t.Errorf("nodes %v", nodes)
	}
	if _, err := cloud.Get(context.Background(), nc.Status.ProviderID); err != nil {
		t.Errorf("get by the named provider id: %v", err)
	}
}
