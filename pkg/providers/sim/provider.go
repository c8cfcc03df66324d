package sim

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	simcloud "github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim/simapi"
	"github.com/capstan-dev/capstan/pkg/controllers/simnodeclass"
	"github.com/capstan-dev/capstan/pkg/providers"
)

// Options are the simulated cloud's flags.
type Options struct {
	// CloudProfile is the profile file; "" is the embedded profile.
	CloudProfile string
	// State is the file the cloud keeps its inventory in.
	State string
}

// Provider is the simulated cloud.
type Provider struct {
	opts Options
}

var _ providers.Provider = (*Provider)(nil)

// New returns the provider, its options unbound.
func New() *Provider { return &Provider{} }

// Name implements providers.Provider.
func (*Provider) Name() string { return simcloud.Name }

// Usage implements providers.Provider.
func (*Provider) Usage() string { return "the embedded simulated cloud" }

// BindFlags implements providers.Provider.
func (p *Provider) BindFlags(f *pflag.FlagSet) {
	f.StringVar(&p.opts.CloudProfile, "cloud-profile", "", "simulated cloud profile file (default: the embedded profile)")
	f.StringVar(&p.opts.State, "sim-state", "capstan-sim-state.json", "file the simulated cloud keeps its inventory in")
}

// Validate implements providers.Provider: the state file must be named;
// the profile is checked when it is loaded, at start.
func (p *Provider) Validate() error {
	if p.opts.State == "" {
		return errors.New("--sim-state must name the file the simulated cloud keeps its inventory in")
	}
	return nil
}

// AddToScheme implements providers.Provider.
func (*Provider) AddToScheme(s *runtime.Scheme) error { return simv1alpha1.AddToScheme(s) }

// Start implements providers.Provider: the cloud reads SimNodeClasses and
// writes Nodes through the manager's client, as a real instance's kubelet
// would register its own.
func (p *Provider) Start(_ context.Context, env providers.Env) (providers.Started, error) {
	profile, err := loadProfile(p.opts.CloudProfile)
	if err != nil {
		return providers.Started{}, err
	}
	types, err := catalog.Load()
	if err != nil {
		return providers.Started{}, err
	}
	mgr := env.Manager
	cloud, err := simcloud.New(simcloud.Options{
		Profile: profile, Catalog: types, Clock: env.Clock, StatePath: p.opts.State,
		NodeClasses: simapi.NodeClasses{Client: mgr.GetClient()},
		Kubelet:     &simapi.Kubelet{Client: mgr.GetClient(), Clock: env.Clock},
		Unavailable: env.Unavailable, LaunchPrices: env.LaunchPrices,
	})
	if err != nil {
		return providers.Started{}, fmt.Errorf("starting the simulated cloud, %w", err)
	}
	return providers.Started{Cloud: cloud, Register: func(ctx context.Context, mgr manager.Manager) error {
		if err := simnodeclass.New(simnodeclass.Deps{Client: mgr.GetClient(), Reservations: cloud, Clock: env.Clock}, simnodeclass.Options{}).Register(ctx, mgr); err != nil {
			return err
		}
		return simnodeclass.NewReregistration(simnodeclass.ReregistrationDeps{Reader: mgr.GetAPIReader(), Cloud: cloud}).Register(ctx, mgr)
	}}, nil
}

func loadProfile(path string) (*simv1alpha1.CloudProfile, error) {
	if path == "" {
		return simcloud.DefaultProfile()
	}
	return simcloud.LoadProfile(path)
}
