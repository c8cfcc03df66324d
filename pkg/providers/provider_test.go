package providers_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/capstan-dev/capstan/pkg/providers"
	"github.com/capstan-dev/capstan/pkg/providers/aws"
	"github.com/capstan-dev/capstan/pkg/providers/sim"
)

func list() providers.List { return providers.List{sim.New(), aws.New()} }

func TestNamed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wantErr string
	}{
		{name: "sim"},
		{name: "aws"},
		{name: "gcp", wantErr: `--cloud-provider "gcp" is unknown (supported: sim, aws)`},
		{name: "", wantErr: `--cloud-provider "" is unknown`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := list().Named(tc.name)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Named(%q) = %v, %v; want an error with %q", tc.name, p, err, tc.wantErr)
				}
				return
			}
			if err != nil || p.Name() != tc.name {
				t.Fatalf("Named(%q) = %v, %v", tc.name, p, err)
			}
		})
	}
}

func TestUsageNamesEveryProvider(t *testing.T) {
	got := list().Usage()
	want := "cloud provider: sim (the embedded simulated cloud), aws (Amazon EC2, with EC2NodeClass)"
	if got != want {
		t.Errorf("Usage() = %q, want %q", got, want)
	}
}

// Every provider's flags are bound on the one command: two providers
// declaring the same flag would panic here rather than in the binary.
func TestProvidersFlagsAreDisjoint(t *testing.T) {
	f := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	for _, p := range list() {
		p.BindFlags(f)
	}
	for _, name := range []string{"cloud-profile", "sim-state", "aws-region", "cluster-name", "vm-memory-overhead-percent"} {
		if f.Lookup(name) == nil {
			t.Errorf("no --%s", name)
		}
	}
}
