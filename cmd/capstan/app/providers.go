package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	awsprovider "github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/controllers/simnodeclass"
)

// provider is one cloud `capstan controller` can run on. The list is
// explicit (providers), not registered from init(): adding a cloud adds
// one entry here, with its flags, its CloudProvider and the controllers of
// its NodeClass kinds; the core is untouched (the NodePool controller
// resolves nodeClassRef through GetSupportedNodeClasses).
type provider struct {
	name, usage string
	// bindFlags adds the provider's own flags, parsed into opts.
	bindFlags func(f *pflag.FlagSet, opts *Options)
	// validate checks them when the provider is chosen; nil: nothing to
	// check.
	validate func(opts Options) error
	// start builds the provider once it is chosen.
	start func(ctx context.Context, opts Options, env providerEnv) (startedProvider, error)
}

// providerEnv is what the core hands a provider when it starts.
type providerEnv struct {
	mgr         manager.Manager
	clock       clock.Clock
	unavailable *cloudprovider.UnavailableOfferings
	// metrics is where the provider registers its own metrics.
	metrics prometheus.Registerer
}

// startedProvider is a running provider: its CloudProvider, undecorated,
// and a function that registers its own controllers with the manager.
type startedProvider struct {
	cloud    cloudprovider.CloudProvider
	register func(manager.Manager) error
}

// providers are the clouds Capstan runs on; the first is the default.
func providers() []provider {
	return []provider{simProvider(), awsProvider()}
}

// providerNamed is the provider called name.
func providerNamed(name string) (provider, error) {
	var names []string
	for _, p := range providers() {
		if p.name == name {
			return p, nil
		}
		names = append(names, p.name)
	}
	return provider{}, fmt.Errorf("--cloud-provider %q is unknown (supported: %s)", name, strings.Join(names, ", "))
}

// providerUsage describes --cloud-provider's values.
func providerUsage() string {
	var parts []string
	for _, p := range providers() {
		parts = append(parts, p.name+" ("+p.usage+")")
	}
	return "cloud provider: " + strings.Join(parts, ", ")
}

// SimOptions configure the simulated cloud (--cloud-provider=sim).
type SimOptions struct {
	CloudProfile string
	State        string
}

func simProvider() provider {
	return provider{
		name: sim.Name, usage: "the embedded simulated cloud",
		bindFlags: func(f *pflag.FlagSet, opts *Options) {
			f.StringVar(&opts.Sim.CloudProfile, "cloud-profile", "", "simulated cloud profile file (default: the embedded profile)")
			f.StringVar(&opts.Sim.State, "sim-state", "capstan-sim-state.json", "file the simulated cloud keeps its inventory in")
		},
		start: startSim,
	}
}

func startSim(_ context.Context, opts Options, env providerEnv) (startedProvider, error) {
	profile, err := loadProfile(opts.Sim.CloudProfile)
	if err != nil {
		return startedProvider{}, err
	}
	types, err := catalog.Load()
	if err != nil {
		return startedProvider{}, err
	}
	mgr := env.mgr
	cloud, err := sim.New(sim.Options{
		Profile: profile, Catalog: types, Clock: env.clock, StatePath: opts.Sim.State,
		NodeClasses: sim.ClientNodeClasses{Client: mgr.GetClient()},
		Kubelet:     &sim.APIKubelet{Client: mgr.GetClient(), Clock: env.clock},
		Unavailable: env.unavailable,
	})
	if err != nil {
		return startedProvider{}, fmt.Errorf("starting the simulated cloud, %w", err)
	}
	return startedProvider{cloud: cloud, register: func(mgr manager.Manager) error {
		if err := simnodeclass.New(mgr.GetClient(), cloud, env.clock, simnodeclass.Options{}).Register(mgr); err != nil {
			return err
		}
		return simnodeclass.NewReregistration(mgr.GetAPIReader(), cloud).Register(mgr)
	}}, nil
}

func loadProfile(path string) (*simv1alpha1.CloudProfile, error) {
	if path == "" {
		return sim.DefaultProfile()
	}
	return sim.LoadProfile(path)
}
