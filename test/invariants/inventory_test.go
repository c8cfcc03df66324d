package invariants

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// stateFile is a state file as the simulated cloud writes it, with what
// the checker does not read.
const stateFile = `{
  "start": "2026-01-02T03:04:05Z",
  "nextID": 2,
  "instances": {
    "i-1": {"id": "i-1", "instanceType": "m5.large", "zone": "us-west-2a", "capacityType": "on-demand", "price": 0.096,
      "nodeClaim": "np-abcde", "nodeClass": "default", "labels": {}, "launchTime": "2026-01-02T03:04:06Z", "state": "running",
      "notices": [{"kind": "SpotInterruption", "deadline": "2026-01-02T03:06:06Z", "message": "m"}]},
    "i-2": {"id": "i-2", "instanceType": "m5.large", "zone": "us-west-2b", "capacityType": "spot", "price": 0.03,
      "nodeClaim": "np-fghij", "nodeClass": "default", "labels": {}, "launchTime": "2026-01-02T03:04:07Z", "state": "terminated"}
  },
  "reservations": {}, "pools": {}, "spotPrices": {}, "events": 0
}`

// ReadInventory reads the cloud's instances and refuses what is not a
// whole state file.
func TestReadInventory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	inv, err := ReadInventory(write("whole.json", stateFile))
	if err != nil {
		t.Fatal(err)
	}
	want := &Inventory{Instances: map[string]Instance{
		"i-1": {ID: "i-1", InstanceType: "m5.large", Zone: "us-west-2a", CapacityType: "on-demand", NodeClaim: "np-abcde",
			LaunchTime: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC), State: "running"},
		"i-2": {ID: "i-2", InstanceType: "m5.large", Zone: "us-west-2b", CapacityType: "spot", NodeClaim: "np-fghij",
			LaunchTime: time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC), State: "terminated"},
	}}
	if diff := cmp.Diff(want, inv); diff != "" {
		t.Errorf("inventory (-want +got):\n%s", diff)
	}
	if got := inv.Instances["i-1"].ProviderID(); got != "sim://us-west-2a/i-1" {
		t.Errorf("provider id %s", got)
	}
	for name, content := range map[string]string{"truncated": stateFile[:len(stateFile)/2], "empty": "", "null": "null", "no instances": `{"start": "2026-01-02T03:04:05Z"}`} {
		if _, err := ReadInventory(write(name, content)); err == nil {
			t.Errorf("a state file %s was read", name)
		}
	}
	if _, err := ReadInventory(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing state file was read")
	}
}

// A running instance of the NodePool without a NodeClaim, or a live
// NodeClaim without a running instance, for longer than the GC period is
// a violation, reported once; shorter, or of another NodePool, or a
// NodeClaim being deleted or not launched yet, it is not.
func TestInventoryAgreesWithClaims(t *testing.T) {
	t.Parallel()
	const gc = 10 * time.Second
	instance := func(id, claim, state string) Instance {
		return Instance{ID: id, InstanceType: "m5.large", Zone: "z", CapacityType: "on-demand", NodeClaim: claim, LaunchTime: t0, State: state}
	}
	inventory := func(instances ...Instance) *Inventory {
		inv := &Inventory{Instances: map[string]Instance{}}
		for _, i := range instances {
			inv.Instances[i.ID] = i
		}
		return inv
	}
	running, terminated := instance("i-1", "np-a", InstanceRunning), instance("i-1", "np-a", "terminated")
	live := claim("np-a", launched("sim://z/i-1"))
	type poll struct {
		at  float64
		inv *Inventory
		// claim, when set, changes before the poll.
		typ   watch.EventType
		claim *v1.NodeClaim
	}
	for _, tc := range []struct {
		name    string
		polls   []poll
		want    int
		objects []string
	}{
		{name: "in step", polls: []poll{{at: 0, inv: inventory(running), typ: watch.Added, claim: live}, {at: 30, inv: inventory(running)}}},
		{name: "leaked", polls: []poll{{at: 0, inv: inventory(running)}, {at: 10, inv: inventory(running)}, {at: 11, inv: inventory(running)}, {at: 30, inv: inventory(running)}},
			want: 1, objects: []string{"instance i-1 (m5.large on-demand z, nodeclaim np-a", "without a nodeclaim for 11s", "np-a was never seen"}},
		{name: "leaked by a deletion", polls: []poll{{at: 0, inv: inventory(running), typ: watch.Added, claim: live}, {at: 1, inv: inventory(running), typ: watch.Deleted, claim: live},
			{at: 20, inv: inventory(running)}}, want: 1, objects: []string{"np-a is gone; last seen as np-a (sim://z/i-1)"}},
		{name: "collected in time", polls: []poll{{at: 0, inv: inventory(running)}, {at: 9, inv: inventory(terminated)}, {at: 30, inv: inventory(terminated)}}},
		{name: "leaked again", polls: []poll{{at: 0, inv: inventory(running)}, {at: 9, inv: inventory(running), typ: watch.Added, claim: live},
			{at: 10, inv: inventory(running), typ: watch.Deleted, claim: live}, {at: 19, inv: inventory(running)}, {at: 21, inv: inventory(running)}},
			want: 1, objects: []string{"for 11s (since 03:04:15)"}},
		{name: "another nodepool's", polls: []poll{{at: 0, inv: inventory(instance("i-1", "npx-a", InstanceRunning))}, {at: 30, inv: inventory(instance("i-1", "npx-a", InstanceRunning))}}},
		{name: "instance gone", polls: []poll{{at: 0, inv: inventory(), typ: watch.Added, claim: live}, {at: 30, inv: inventory()}},
			want: 1, objects: []string{"nodeclaim np-a (sim://z/i-1) is not being deleted", "for 30s", ": no instance"}},
		{name: "instance terminated", polls: []poll{{at: 0, inv: inventory(terminated), typ: watch.Added, claim: live}, {at: 30, inv: inventory(terminated)}},
			want: 1, objects: []string{"np-a (sim://z/i-1)", "instance i-1 (m5.large on-demand z, nodeclaim np-a, launched 03:04:05, terminated)"}},
		{name: "instance stopped", polls: []poll{{at: 0, inv: inventory(instance("i-1", "np-a", "stopped")), typ: watch.Added, claim: live},
			{at: 30, inv: inventory(instance("i-1", "np-a", "stopped"))}}, want: 1},
		{name: "instance terminated under a nodeclaim being deleted", polls: []poll{
			{at: 0, inv: inventory(terminated), typ: watch.Added, claim: claim("np-a", launched("sim://z/i-1"), deleting)}, {at: 30, inv: inventory(terminated)}}},
		{name: "not launched yet", polls: []poll{{at: 0, inv: inventory(), typ: watch.Added, claim: claim("np-a")}, {at: 30, inv: inventory()}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := New(Options{NodePool: "np", GCPeriod: gc})
			for _, p := range tc.polls {
				if p.claim != nil {
					c.ObserveClaim(p.typ, p.claim, at(p.at))
				}
				c.ObserveInventory(p.inv, at(p.at))
			}
			expectViolations(t, c, tc.want, tc.objects...)
		})
	}
}
