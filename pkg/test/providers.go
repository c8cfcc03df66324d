package test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/providers"
)

// ParseProviderFlags binds p's flags on a fresh flag set and parses args
// into them, as `capstan controller` does; an error fails the test.
func ParseProviderFlags(t *testing.T, p providers.Provider, args ...string) {
	t.Helper()
	f := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	p.BindFlags(f)
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
}

// ProviderEnv is what the core hands a provider's Start, for a test: mgr
// (nil when Start must fail before using it), a fake clock at now, a fresh
// unavailable-offerings cache and a registry of its own.
func ProviderEnv(mgr manager.Manager, now time.Time) providers.Env {
	clk := clocktesting.NewFakeClock(now)
	return providers.Env{Manager: mgr, Clock: clk, Unavailable: cloudprovider.NewUnavailableOfferings(clk, time.Minute), Metrics: prometheus.NewRegistry()}
}

// StartProvider starts p on a manager over env until the test ends, as
// `capstan controller` does (Start, then Started.Register), and checks
// what the core relies on: the cloud bears p's name, serves at least one
// NodeClass kind, and p's AddToScheme knows every kind it serves.
func StartProvider(t *testing.T, env *Environment, p providers.Provider, now time.Time) providers.Started {
	t.Helper()
	ctx := context.Background()
	var started providers.Started
	StartManager(t, env, func(mgr manager.Manager) error {
		var err error
		if started, err = p.Start(ctx, ProviderEnv(mgr, now)); err != nil {
			return err
		}
		return started.Register(ctx, mgr)
	})
	if got := started.Cloud.Name(); got != p.Name() {
		t.Errorf("%s's cloud is named %q", p.Name(), got)
	}
	kinds := started.Cloud.GetSupportedNodeClasses()
	if len(kinds) == 0 {
		t.Errorf("%s's cloud serves no NodeClass kind", p.Name())
	}
	s := runtime.NewScheme()
	if err := p.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, gvk := range kinds {
		if !s.Recognizes(gvk) {
			t.Errorf("%s serves %s but does not add it to the scheme", p.Name(), gvk)
		}
	}
	return started
}
