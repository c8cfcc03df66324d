package sim_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// another is a second cloud over f's state file and clock, with its own
// kubelet: the other replica.
func another(t *testing.T, f *fixture, statePath string) (*sim.Cloud, *sim.MemoryKubelet) {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	k := sim.NewMemoryKubelet()
	c, err := sim.New(sim.Options{Profile: f.profile, Catalog: cat, Clock: f.clock, StatePath: statePath, NodeClasses: f.classes, Kubelet: k})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, k
}

func withPool(count int) func(*simv1alpha1.CloudProfileSpec) {
	return func(s *simv1alpha1.CloudProfileSpec) {
		s.Capacity = append(s.Capacity, simv1alpha1.CapacityPool{InstanceType: "m5.large", Zone: "us-west-2a", CapacityType: v1.CapacityTypeOnDemand, Count: count})
	}
}

// A failed save fails the operation and leaves the inventory as the file
// holds it: no instance, pool slot, reservation slot or id is taken, no
// node launches or stops. The failure is one root hits too: the state
// file's directory is gone.
func TestFailedSaveRollsBack(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, withPool(2)))
	dir := filepath.Join(t.TempDir(), "cloud")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.json")
	cloud, kubelet := another(t, f, path)
	ctx := context.Background()
	reserved, err := cloud.Create(ctx, claim("nc-0", in(v1.LabelInstanceType, "m5.large")))
	if err != nil {
		t.Fatal(err)
	}
	before := cloud.Snapshot()
	if before.Reservations["cr-small"].Used != 1 {
		t.Fatalf("cr-small used %d, want 1", before.Reservations["cr-small"].Used)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}

	onDemand := claim("nc-1", in(v1.LabelInstanceType, "m5.large"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand), in(v1.LabelZone, "us-west-2a"))
	_, err = cloud.Create(ctx, onDemand)
	if !cloudprovider.IsCreateError(err) || !strings.Contains(err.Error(), path) {
		t.Errorf("create without a state directory: %v, want a create error naming %s", err, path)
	}
	if err := cloud.Delete(ctx, reserved); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("delete without a state directory: %v, want an error naming %s", err, path)
	}
	if diff := cmp.Diff(before, cloud.Snapshot()); diff != "" {
		t.Errorf("inventory after failed saves (-before +after):\n%s", diff)
	}
	if nodes := kubelet.Due(f.clock.Now().Add(48 * 3600e9)); len(nodes) != 1 {
		t.Errorf("%d nodes launched, want only nc-0's", len(nodes))
	}
	if inst := before.Instances["i-000000000001"]; inst == nil || kubelet.Stopped(sim.NodeName(inst)) {
		t.Errorf("nc-0's node stopped by a delete that failed")
	}

	// With the directory back the same operations succeed, from the
	// counts as they were: the next id, the pool's last slots.
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	got, err := cloud.Create(ctx, onDemand)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got.Status.ProviderID, "/i-000000000002") {
		t.Errorf("provider id %s, want id 2", got.Status.ProviderID)
	}
	if err := cloud.Delete(ctx, reserved); err != nil {
		t.Fatal(err)
	}
	s, err := sim.LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Pools["m5.large/us-west-2a/on-demand"] != 1 || s.Reservations["cr-small"].Used != 0 || len(s.Instances) != 2 {
		t.Errorf("state file: pool %d, cr-small used %d, %d instances; want 1, 0, 2", s.Pools["m5.large/us-west-2a/on-demand"], s.Reservations["cr-small"].Used, len(s.Instances))
	}
}

// A state path that is a directory fails every operation with an error
// naming it, at start and once the cloud runs.
func TestStatePathIsADirectory(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	if err := os.Remove(f.state); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(f.state, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f.cloud.Create(ctx, claim("nc", in(v1.LabelInstanceType, "m5.large"))); err == nil || !strings.Contains(err.Error(), f.state) {
		t.Errorf("create: %v, want an error naming %s", err, f.state)
	}
	cat, _ := catalog.Load()
	if _, err := sim.New(sim.Options{Profile: f.profile, Catalog: cat, Clock: f.clock, StatePath: f.state, NodeClasses: f.classes}); err == nil || !strings.Contains(err.Error(), f.state) {
		t.Errorf("new: %v, want an error naming %s", err, f.state)
	}
}

// Two clouds over one file (the leader and a standby that takes over)
// each re-read the other's changes before their own: neither overwrites
// the other's instances or reservation use.
func TestCloudsShareStateFile(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	standby, _ := another(t, f, f.state)
	ctx := context.Background()
	reservedClaim := func(name string) *v1.NodeClaim {
		return claim(name, in(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved), in(v1.LabelCapacityReservationID, "cr-small"))
	}
	first, err := f.cloud.Create(ctx, reservedClaim("nc-a"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := standby.List(ctx)
	if err != nil || len(list) != 1 || list[0].Status.ProviderID != first.Status.ProviderID {
		t.Fatalf("standby lists %v, %v; want the leader's instance", list, err)
	}
	// The leader took cr-small's one slot; the standby knows.
	if _, err := standby.Create(ctx, reservedClaim("nc-b")); !cloudprovider.IsInsufficientCapacityError(err) {
		t.Errorf("standby launch into the full reservation: %v, want insufficient capacity", err)
	}
	second, err := standby.Create(ctx, claim("nc-c", in(v1.LabelInstanceType, "m5.large"), in(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)))
	if err != nil {
		t.Fatal(err)
	}
	if second.Status.ProviderID == first.Status.ProviderID {
		t.Fatalf("standby reused the leader's instance id %s", first.Status.ProviderID)
	}
	if list, err := f.cloud.List(ctx); err != nil || len(list) != 2 {
		t.Errorf("leader lists %d instances (%v), want both", len(list), err)
	}
	// The leader deletes the standby's instance; the standby sees it gone.
	if err := f.cloud.Delete(ctx, second); err != nil {
		t.Fatal(err)
	}
	if _, err := standby.Get(ctx, second.Status.ProviderID); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("standby get of the deleted instance: %v, want not found", err)
	}
	s, err := sim.LoadState(f.state)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Instances) != 2 || s.Reservations["cr-small"].Used != 1 || s.NextID != 2 {
		t.Errorf("state file: %d instances, cr-small used %d, nextID %d; want 2, 1, 2", len(s.Instances), s.Reservations["cr-small"].Used, s.NextID)
	}
}
