package sim_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/readlimit"
)

func TestDurableInventory(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	ctx := context.Background()
	nc, err := f.cloud.Create(ctx, claim("nc", in(v1.LabelInstanceType, "m5.large")))
	if err != nil {
		t.Fatal(err)
	}
	// Another cloud over the same file sees the instance: a crashed
	// controller leaks nothing garbage collection cannot find.
	cat, _ := catalog.Load()
	again, err := sim.New(sim.Options{Profile: f.profile, Catalog: cat, Clock: f.clock, StatePath: f.state, NodeClasses: f.classes})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := again.List(ctx)
	if len(list) != 1 || list[0].Status.ProviderID != nc.Status.ProviderID {
		t.Fatalf("reloaded inventory %+v", list)
	}
	if err := again.Delete(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if err := again.Delete(ctx, nc); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("second delete: %v, want not found", err)
	}
	s, err := sim.LoadState(f.state)
	if err != nil || s.Reservations["cr-small"].Used != 0 {
		t.Errorf("state after delete: %v %+v", err, s)
	}
	if nodes := f.kubelet.Due(f.clock.Now().Add(2 * time.Second)); len(nodes) != 1 || nodes[0].Spec.ProviderID != nc.Status.ProviderID {
		t.Errorf("kubelet nodes %v", nodes)
	}
}

// A state file that cannot be trusted is an error naming the file, when
// the cloud starts and when it re-reads the file before an operation;
// nothing launches over it.
func TestCorruptStateFile(t *testing.T) {
	edit := func(mod func(s map[string]any)) func(t *testing.T, valid []byte) []byte {
		return func(t *testing.T, valid []byte) []byte {
			var s map[string]any
			if err := json.Unmarshal(valid, &s); err != nil {
				t.Fatal(err)
			}
			mod(s)
			out, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	text := func(s string) func(*testing.T, []byte) []byte {
		return func(*testing.T, []byte) []byte { return []byte(s) }
	}
	obj := func(s map[string]any, key string) map[string]any { return s[key].(map[string]any) }
	only := func(s map[string]any) map[string]any {
		for _, v := range obj(s, "instances") {
			return v.(map[string]any)
		}
		panic("no instance")
	}
	for _, tc := range []struct {
		name    string
		content func(t *testing.T, valid []byte) []byte
		want    string
	}{
		{"empty", text(""), "empty"},
		{"blank", text(" \n"), "empty"},
		{"null", text("null"), "null"},
		{"empty object", text("{}"), "no start time"},
		{"truncated", func(_ *testing.T, valid []byte) []byte { return valid[:len(valid)/2] }, "unexpected EOF"},
		{"garbled", text(`{"start": ][`), "invalid character"},
		{"trailing data", func(_ *testing.T, valid []byte) []byte { return append(valid, "{}"...) }, "data after"},
		{"unknown field", edit(func(s map[string]any) { s["nextInstance"] = 7 }), "unknown field"},
		{"no instances", edit(func(s map[string]any) { delete(s, "instances") }), "no instances"},
		{"no pools", edit(func(s map[string]any) { s["pools"] = nil }), "no pools"},
		{"negative nextID", edit(func(s map[string]any) { s["nextID"] = -1 }), "negative nextID"},
		{"negative events", edit(func(s map[string]any) { s["events"] = -2 }), "negative events"},
		{"negative pool", edit(func(s map[string]any) { obj(s, "pools")["m5.large/us-west-2a/on-demand"] = -1 }), "negative count"},
		{"negative spot price", edit(func(s map[string]any) { obj(s, "spotPrices")["m5.large/us-west-2a"] = -0.1 }), "negative"},
		{"negative reservation use", edit(func(s map[string]any) { obj(obj(s, "reservations"), "cr-big")["external"] = -1 }), "negative count"},
		{"reservation overbooked", edit(func(s map[string]any) { obj(obj(s, "reservations"), "cr-big")["external"] = 3 }), "more than its total"},
		{"reservation filed wrongly", edit(func(s map[string]any) { obj(obj(s, "reservations"), "cr-big")["id"] = "cr-other" }), `has id "cr-other"`},
		{"null reservation", edit(func(s map[string]any) { obj(s, "reservations")["cr-big"] = nil }), "reservation cr-big is null"},
		{"instance without id", edit(func(s map[string]any) { only(s)["id"] = "" }), "has no id"},
		{"instance filed wrongly", edit(func(s map[string]any) { only(s)["id"] = "i-000000000009" }), `has id "i-000000000009"`},
		{"null instance", edit(func(s map[string]any) { obj(s, "instances")["i-000000000001"] = nil }), "is null"},
		{"instance without zone", edit(func(s map[string]any) { only(s)["zone"] = "" }), "lacks"},
		{"unknown instance state", edit(func(s map[string]any) { only(s)["state"] = "rebooting" }), "unknown state"},
		{"instance beyond nextID", edit(func(s map[string]any) { s["nextID"] = 0 }), "beyond nextID"},
		{"instance in unknown reservation", edit(func(s map[string]any) { only(s)["reservationID"] = "cr-gone" }), "unknown reservation"},
		{"reservation use not its instances", edit(func(s map[string]any) { obj(obj(s, "reservations"), "cr-small")["used"] = 0 }), "counts 0 used, but 1"},
		{"terminated instance counted", edit(func(s map[string]any) { only(s)["state"] = "terminated" }), "counts 1 used, but 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
			ctx := context.Background()
			if _, err := f.cloud.Create(ctx, claim("nc", in(v1.LabelInstanceType, "m5.large"))); err != nil {
				t.Fatal(err)
			}
			valid, err := os.ReadFile(f.state)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.state, tc.content(t, valid), 0o600); err != nil {
				t.Fatal(err)
			}
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, sim.ErrCorruptState) || !strings.Contains(err.Error(), f.state) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %v, want a corrupt-state error naming %s and saying %q", what, err, f.state, tc.want)
				}
			}
			_, err = sim.LoadState(f.state)
			check("LoadState", err)
			cat, _ := catalog.Load()
			_, err = sim.New(sim.Options{Profile: f.profile, Catalog: cat, Clock: f.clock, StatePath: f.state, NodeClasses: f.classes})
			check("New", err)
			// The running cloud re-reads the changed file and refuses.
			_, err = f.cloud.Create(ctx, claim("nc-2", in(v1.LabelInstanceType, "m5.large")))
			check("Create", err)
			_, err = f.cloud.List(ctx)
			check("List", err)
			if nodes := f.kubelet.Due(f.clock.Now().Add(time.Hour)); len(nodes) != 1 {
				t.Errorf("%d nodes launched, want only the first", len(nodes))
			}
		})
	}
}

// A missing state file is a fresh cloud, written at once.
func TestMissingStateFileStartsFresh(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	s, err := sim.LoadState(f.state)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Instances) != 0 || s.Reservations["cr-big"].Total != 2 || !s.Start.Equal(f.clock.Now()) {
		t.Errorf("fresh state %+v", s)
	}
	if _, err := sim.LoadState(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadState of a missing file: %v, want not exist", err)
	}
}

// The profile and the state file are read as regular files of at most
// their cap: a device, a named pipe (which would block) or a file over
// the cap is refused with its name, before memory runs out.
func TestFilesAreReadCapped(t *testing.T) {
	dir := t.TempDir()
	sparse := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	bigProfile, bigState := sparse("profile.yaml", readlimit.MaxDocumentBytes+1), sparse("state.json", sim.MaxStateBytes+1)
	for _, tc := range []struct {
		name string
		read func() error
		want string
	}{
		{"profile over the cap", func() error { _, err := sim.LoadProfile(bigProfile); return err },
			"reading cloud profile " + bigProfile + ", larger than the 64 MiB limit"},
		{"profile from a device", func() error { _, err := sim.LoadProfile("/dev/zero"); return err },
			"reading cloud profile /dev/zero, not a regular file but a character device"},
		{"profile from a named pipe", func() error { _, err := sim.LoadProfile(fifo); return err },
			"reading cloud profile " + fifo + ", not a regular file but a named pipe"},
		{"state over the cap", func() error { _, err := sim.LoadState(bigState); return err },
			"reading sim state " + bigState + ", larger than the 256 MiB limit"},
		{"a cloud over a state file over the cap", func() error {
			cat, err := catalog.Load()
			if err != nil {
				t.Fatal(err)
			}
			_, err = sim.New(sim.Options{Profile: profile(simv1alpha1.CloudStyleAWS), Catalog: cat, Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), StatePath: bigState, NodeClasses: nodeClasses{}})
			return err
		}, "reading sim state " + bigState + ", larger than the 256 MiB limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.read(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
