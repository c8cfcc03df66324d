package simulator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/simulator"
)

// A profile event that names no Deployment is reported with the file and
// document the profile came from, whether among the manifests or passed
// with --cloud-profile.
func TestScaleEventErrorNamesTheProfileFile(t *testing.T) {
	const profile = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n---\n" +
		"apiVersion: sim.capstan.dev/v1alpha1\nkind: CloudProfile\nmetadata: {name: scale}\nspec:\n  events:\n  - {at: 1m, type: Scale, workload: default/missing, replicas: 3}\n"
	path := filepath.Join(t.TempDir(), "cloud.yaml")
	if err := os.WriteFile(path, []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, manifest, profilePath, want string
	}{
		{name: "among the manifests", manifest: profile, want: "test.yaml, document 2: spec.events[0].workload: no Deployment default/missing"},
		{name: "--cloud-profile", manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", profilePath: path, want: path + ": spec.events[0].workload: no Deployment default/missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := &manifests.Set{}
			if err := manifests.Read("test.yaml", []byte(tc.manifest), set); err != nil {
				t.Fatal(err)
			}
			_, err := simulator.Simulate(context.Background(), set, tc.profilePath, simulator.DefaultOptions())
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("Simulate: err = %v, want it to start %q", err, tc.want)
			}
		})
	}
}
