package sim_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// editInstances rewrites every instance in the state file at path; the
// cloud re-reads the changed file before its next operation.
func editInstances(t *testing.T, path string, mod func(inst map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	for _, inst := range s["instances"].(map[string]any) {
		mod(inst.(map[string]any))
	}
	if data, err = json.Marshal(s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestIsDrifted(t *testing.T) {
	const (
		reserved = "m5.large"  // into cr-small, which the default class selects by its tag
		plain    = "c5.xlarge" // no reservation
	)
	tagged := func(s *simv1alpha1.SimNodeClassSpec) { s.Tags = map[string]string{"team": "web", "env": "prod"} }
	deselect := func(s *simv1alpha1.SimNodeClassSpec) {
		s.CapacityReservationSelectorTerms = []simv1alpha1.CapacityReservationSelectorTerm{{ID: "cr-big"}}
	}
	stripHash := func(inst map[string]any) { delete(inst, "nodeClassHash"); delete(inst, "nodeClassHashVersion") }
	for _, tc := range []struct {
		name         string
		instanceType string
		// before is applied to the SimNodeClass before the launch, after
		// once the instance runs.
		before, after func(*simv1alpha1.SimNodeClassSpec)
		// edit rewrites the recorded instance before IsDrifted.
		edit    func(inst map[string]any)
		want    cloudprovider.DriftReason
		wantErr bool
	}{
		{name: "nothing changed", instanceType: plain},
		{name: "nothing changed, reserved", instanceType: reserved},
		{name: "tags added", instanceType: plain, after: tagged, want: sim.DriftNodeClass},
		{name: "a tag's value", instanceType: plain, before: tagged,
			after: func(s *simv1alpha1.SimNodeClassSpec) { s.Tags["team"] = "ml" }, want: sim.DriftNodeClass},
		{name: "a tag removed", instanceType: plain, before: tagged,
			after: func(s *simv1alpha1.SimNodeClassSpec) { delete(s.Tags, "env") }, want: sim.DriftNodeClass},
		{name: "tags removed", instanceType: plain, before: tagged,
			after: func(s *simv1alpha1.SimNodeClassSpec) { s.Tags = nil }, want: sim.DriftNodeClass},
		{name: "tags rebuilt in another order", instanceType: plain, before: tagged,
			after: func(s *simv1alpha1.SimNodeClassSpec) { s.Tags = map[string]string{"env": "prod", "team": "web"} }},
		{name: "empty tags for none", instanceType: plain,
			after: func(s *simv1alpha1.SimNodeClassSpec) { s.Tags = map[string]string{} }},
		{name: "evictionPolicy", instanceType: plain,
			after: func(s *simv1alpha1.SimNodeClassSpec) { s.EvictionPolicy = simv1alpha1.EvictionPolicyDelete }, want: sim.DriftNodeClass},
		{name: "evictionPolicy defaulted", instanceType: plain,
			before: func(s *simv1alpha1.SimNodeClassSpec) { s.EvictionPolicy = "" },
			after:  func(s *simv1alpha1.SimNodeClassSpec) { s.EvictionPolicy = simv1alpha1.EvictionPolicyDeallocate }},
		{name: "spotMaxPrice", instanceType: plain,
			after: func(s *simv1alpha1.SimNodeClassSpec) { s.SpotMaxPrice = ptr.To("0.5") }},
		{name: "spotMaxPrice, reserved", instanceType: reserved,
			after: func(s *simv1alpha1.SimNodeClassSpec) { s.SpotMaxPrice = ptr.To("0.0001") }},
		{name: "reservation deselected", instanceType: reserved, after: deselect, want: sim.DriftReservationDeselected},
		{name: "reservation terms changed, still selected", instanceType: reserved,
			after: func(s *simv1alpha1.SimNodeClassSpec) {
				s.CapacityReservationSelectorTerms = []simv1alpha1.CapacityReservationSelectorTerm{{ID: "cr-small"}}
			}},
		{name: "reservation terms, no reservation", instanceType: plain, after: deselect},
		{name: "tags and reservation: static first", instanceType: reserved,
			after: func(s *simv1alpha1.SimNodeClassSpec) { tagged(s); deselect(s) }, want: sim.DriftNodeClass},
		{name: "tags changed, no recorded hash", instanceType: plain, after: tagged, edit: stripHash},
		{name: "evictionPolicy changed, no recorded hash", instanceType: plain,
			after: func(s *simv1alpha1.SimNodeClassSpec) { s.EvictionPolicy = simv1alpha1.EvictionPolicyDelete }, edit: stripHash},
		{name: "no recorded hash, reservation deselected", instanceType: reserved,
			after: func(s *simv1alpha1.SimNodeClassSpec) { tagged(s); deselect(s) }, edit: stripHash, want: sim.DriftReservationDeselected},
		{name: "hash of another version", instanceType: plain, after: tagged,
			edit: func(inst map[string]any) { inst["nodeClassHashVersion"] = "v0" }},
		{name: "recorded hash differs", instanceType: plain,
			edit: func(inst map[string]any) { inst["nodeClassHash"] = "0000000000000000" }, want: sim.DriftNodeClass},
		{name: "class gone", instanceType: plain, after: tagged, edit: func(inst map[string]any) { inst["nodeClass"] = "gone" }},
		{name: "class gone, reserved", instanceType: reserved, edit: func(inst map[string]any) { inst["nodeClass"] = "gone" }, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
			ctx := context.Background()
			class := &f.classes["default"].Spec
			if tc.before != nil {
				tc.before(class)
			}
			nc, err := f.cloud.Create(ctx, claim("nc", in(v1.LabelInstanceType, tc.instanceType)))
			if err != nil {
				t.Fatal(err)
			}
			if got := nc.Labels[v1.LabelCapacityReservationID] != ""; got != (tc.instanceType == reserved) {
				t.Fatalf("launched %s into reservation %q", tc.instanceType, nc.Labels[v1.LabelCapacityReservationID])
			}
			if tc.after != nil {
				tc.after(class)
			}
			if tc.edit != nil {
				editInstances(t, f.state, tc.edit)
			}
			got, err := f.cloud.IsDrifted(ctx, nc)
			if tc.wantErr {
				if !cloudprovider.IsNodeClassNotReadyError(err) {
					t.Errorf("IsDrifted() = %q, %v; want a NodeClassNotReadyError", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("IsDrifted() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// A NodeClaim the cloud does not know (garbage collected, another
// cloud's) has not drifted.
func TestIsDriftedUnknownInstance(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	nc := claim("nc")
	nc.Status.ProviderID = "sim://us-west-2a/i-0000000000ff"
	if got, err := f.cloud.IsDrifted(context.Background(), nc); got != "" || err != nil {
		t.Errorf("IsDrifted() = %q, %v; want not drifted", got, err)
	}
}

// The hash is recorded with the instance, in the state file, and shown on
// the NodeClaims Create, Get and List return; Create keeps the
// NodeClaim's own annotations.
func TestNodeClassHashIsRecordedAtLaunch(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	ctx := context.Background()
	f.classes["default"].Spec.Tags = map[string]string{"team": "web"}
	want := sim.NodeClassHash(f.classes["default"].Spec)
	in := claim("nc", in(v1.LabelInstanceType, "c5.xlarge"))
	in.Annotations = map[string]string{v1.NodePoolHashAnnotationKey: "abc", sim.NodeClassHashAnnotationKey: "stale"}
	nc, err := f.cloud.Create(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{
		v1.NodePoolHashAnnotationKey:          "abc",
		sim.NodeClassHashAnnotationKey:        want,
		sim.NodeClassHashVersionAnnotationKey: sim.NodeClassHashVersion,
	}, nc.Annotations); diff != "" {
		t.Errorf("Create annotations (-want +got):\n%s", diff)
	}
	if in.Annotations[sim.NodeClassHashAnnotationKey] != "stale" {
		t.Errorf("Create modified its argument's annotations: %v", in.Annotations)
	}
	hashOnly := map[string]string{sim.NodeClassHashAnnotationKey: want, sim.NodeClassHashVersionAnnotationKey: sim.NodeClassHashVersion}
	got, err := f.cloud.Get(ctx, nc.Status.ProviderID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hashOnly, got.Annotations); diff != "" {
		t.Errorf("Get annotations (-want +got):\n%s", diff)
	}
	list, err := f.cloud.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("List() = %v, %v", list, err)
	}
	if diff := cmp.Diff(hashOnly, list[0].Annotations); diff != "" {
		t.Errorf("List annotations (-want +got):\n%s", diff)
	}
	s, err := sim.LoadState(f.state)
	if err != nil {
		t.Fatal(err)
	}
	for _, inst := range s.Instances {
		if inst.NodeClassHash != want || inst.NodeClassHashVersion != sim.NodeClassHashVersion {
			t.Errorf("state file records hash %q (%q), want %q (%q)", inst.NodeClassHash, inst.NodeClassHashVersion, want, sim.NodeClassHashVersion)
		}
	}
}

// A state file written before instances recorded their hash (testdata,
// written by that version: a reserved and a spot instance of the default
// class) loads; its instances are never drifted by the hash, the
// reservation rule still judges them, and they stay without a hash when
// the cloud saves the file again.
func TestStateFileWithoutNodeClassHashes(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", "state-before-nodeclass-hash.json"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := sim.LoadState(path)
	if err != nil {
		t.Fatalf("LoadState: %v", err)
	}
	if len(s.Instances) != 2 {
		t.Fatalf("%d instances, want 2", len(s.Instances))
	}
	cloud, _ := another(t, f, path)
	ctx := context.Background()
	list, err := cloud.List(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("List() = %v, %v", list, err)
	}
	for _, nc := range list {
		if len(nc.Annotations) != 0 {
			t.Errorf("nodeclaim %s has annotations %v, want none", nc.Name, nc.Annotations)
		}
	}
	class := &f.classes["default"].Spec
	class.Tags = map[string]string{"team": "web"}
	class.EvictionPolicy = simv1alpha1.EvictionPolicyDelete
	judge := func() map[string]cloudprovider.DriftReason {
		t.Helper()
		out := map[string]cloudprovider.DriftReason{}
		for _, nc := range list {
			reason, err := cloud.IsDrifted(ctx, nc)
			if err != nil {
				t.Fatalf("IsDrifted(%s): %v", nc.Name, err)
			}
			out[nc.Name] = reason
		}
		return out
	}
	if diff := cmp.Diff(map[string]cloudprovider.DriftReason{"reserved": "", "spot": ""}, judge()); diff != "" {
		t.Errorf("drift after a static change (-want +got):\n%s", diff)
	}
	class.CapacityReservationSelectorTerms = []simv1alpha1.CapacityReservationSelectorTerm{{ID: "cr-big"}}
	if diff := cmp.Diff(map[string]cloudprovider.DriftReason{"reserved": sim.DriftReservationDeselected, "spot": ""}, judge()); diff != "" {
		t.Errorf("drift after deselecting the reservation (-want +got):\n%s", diff)
	}
	// A launch saves the file: the new instance has a hash, the old ones
	// still have none.
	nc, err := cloud.Create(ctx, claim("new", in(v1.LabelInstanceType, "c5.xlarge")))
	if err != nil {
		t.Fatal(err)
	}
	if s, err = sim.LoadState(path); err != nil {
		t.Fatal(err)
	}
	for _, inst := range s.Instances {
		if want := map[string]string{"new": sim.NodeClassHash(*class)}[inst.NodeClaim]; inst.NodeClassHash != want {
			t.Errorf("instance %s (%s) records hash %q, want %q", inst.ID, inst.NodeClaim, inst.NodeClassHash, want)
		}
	}
	if got, err := cloud.IsDrifted(ctx, nc); got != "" || err != nil {
		t.Errorf("IsDrifted(new) = %q, %v; want not drifted", got, err)
	}
}

func TestNodeClassHash(t *testing.T) {
	base := func() simv1alpha1.SimNodeClassSpec {
		return simv1alpha1.SimNodeClassSpec{
			EvictionPolicy: simv1alpha1.EvictionPolicyDelete,
			Tags:           map[string]string{"team": "ml", "env": "prod"},
			SpotMaxPrice:   ptr.To("0.5"),
			CapacityReservationSelectorTerms: []simv1alpha1.CapacityReservationSelectorTerm{
				{ID: "cr-small"},
			},
		}
	}
	want := sim.NodeClassHash(base())
	for _, tc := range []struct {
		name    string
		mod     func(*simv1alpha1.SimNodeClassSpec)
		changes bool
	}{
		{"nothing", func(*simv1alpha1.SimNodeClassSpec) {}, false},
		{"a tag's value", func(s *simv1alpha1.SimNodeClassSpec) { s.Tags["env"] = "dev" }, true},
		{"a new tag", func(s *simv1alpha1.SimNodeClassSpec) { s.Tags["new"] = "" }, true},
		{"a tag renamed", func(s *simv1alpha1.SimNodeClassSpec) { s.Tags = map[string]string{"team": "ml", "stage": "prod"} }, true},
		{"no tags", func(s *simv1alpha1.SimNodeClassSpec) { s.Tags = nil }, true},
		{"evictionPolicy", func(s *simv1alpha1.SimNodeClassSpec) { s.EvictionPolicy = simv1alpha1.EvictionPolicyDeallocate }, true},
		{"evictionPolicy unset", func(s *simv1alpha1.SimNodeClassSpec) { s.EvictionPolicy = "" }, true},
		{"spotMaxPrice", func(s *simv1alpha1.SimNodeClassSpec) { s.SpotMaxPrice = ptr.To("0.01") }, false},
		{"spotMaxPrice unset", func(s *simv1alpha1.SimNodeClassSpec) { s.SpotMaxPrice = nil }, false},
		{"capacityReservationSelectorTerms", func(s *simv1alpha1.SimNodeClassSpec) {
			s.CapacityReservationSelectorTerms = []simv1alpha1.CapacityReservationSelectorTerm{{Type: simv1alpha1.ReservationTypeOpen}}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.mod(&s)
			if got := sim.NodeClassHash(s); (got != want) != tc.changes {
				t.Errorf("hash %s, base %s: changed = %t, want %t", got, want, got != want, tc.changes)
			}
		})
	}
	// Defaulting is no change: unset evictionPolicy is Deallocate, and no
	// tags are empty tags.
	if a, b := sim.NodeClassHash(simv1alpha1.SimNodeClassSpec{}), sim.NodeClassHash(simv1alpha1.SimNodeClassSpec{EvictionPolicy: simv1alpha1.EvictionPolicyDeallocate, Tags: map[string]string{}}); a != b {
		t.Errorf("hash of the empty spec %s, of the defaulted one %s", a, b)
	}
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(want) {
		t.Fatalf("hash %q, want 16 lowercase hex characters", want)
	}
	for i := range 200 {
		// Fresh maps each time, so Go's randomised map order varies.
		if got := sim.NodeClassHash(base()); got != want {
			t.Fatalf("hash %d = %s, want %s", i, got, want)
		}
	}
}

// An instance launched by one Capstan must not look drifted to the next
// with the same NodeClassHashVersion: the hash of a fixed spec is pinned.
func TestNodeClassHashIsPinnedForItsVersion(t *testing.T) {
	const pinned = "44e79c860da77b7b" // sha256 of {"evictionPolicy":"Delete","tags":{"env":"prod","team":"ml"}}
	got := sim.NodeClassHash(simv1alpha1.SimNodeClassSpec{EvictionPolicy: simv1alpha1.EvictionPolicyDelete, Tags: map[string]string{"team": "ml", "env": "prod"}})
	if sim.NodeClassHashVersion != "v1" || got != pinned {
		t.Errorf("hash %s (version %s), pinned %s for v1: a change to what or how NodeClassHash hashes must bump NodeClassHashVersion and re-pin",
			got, sim.NodeClassHashVersion, pinned)
	}
}
