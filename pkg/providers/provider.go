package providers

import (
	"context"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Provider is one cloud `capstan controller` can run on. A value holds its
// own options: BindFlags parses into them, so build a fresh value for each
// command (no package-level state).
type Provider interface {
	// Name is the --cloud-provider value that chooses it; the cloud's
	// CloudProvider.Name.
	Name() string
	// Usage describes it in --cloud-provider's help.
	Usage() string
	// BindFlags adds its own flags to f. Every provider's flags are
	// bound, chosen or not, so a flag of another cloud is ignored rather
	// than rejected.
	BindFlags(f *pflag.FlagSet)
	// Validate checks its flags once it is chosen; each error names its
	// flag.
	Validate() error
	// AddToScheme adds its API kinds (its NodeClasses) to the manager's
	// scheme.
	AddToScheme(s *runtime.Scheme) error
	// Start builds its CloudProvider once it is chosen.
	Start(ctx context.Context, env Env) (Started, error)
}

// Env is what the core hands a provider when it starts.
type Env struct {
	Manager manager.Manager
	Clock   clock.Clock
	// Unavailable is the offerings cache the core shares with the cloud.
	Unavailable *cloudprovider.UnavailableOfferings
	// LaunchPrices are the prices the solver weighed, which a cloud that
	// honours them orders its launch candidates by.
	LaunchPrices *cloudprovider.LaunchPrices
	// Metrics is where the provider registers its own metrics.
	Metrics prometheus.Registerer
}

// Started is a running provider.
type Started struct {
	// Cloud is its CloudProvider, undecorated; its NodeClass kinds are
	// Cloud.GetSupportedNodeClasses.
	Cloud cloudprovider.CloudProvider
	// Register adds its own controllers (those of its NodeClass kinds)
	// to mgr.
	Register func(ctx context.Context, mgr manager.Manager) error
}

// List is the providers a binary offers; the first is the default.
type List []Provider

// Named is the provider called name.
func (l List) Named(name string) (Provider, error) {
	for _, p := range l {
		if p.Name() == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("--cloud-provider %q is unknown (supported: %s)", name, strings.Join(l.names(), ", "))
}

// Usage describes --cloud-provider's values.
func (l List) Usage() string {
	var parts []string
	for _, p := range l {
		parts = append(parts, p.Name()+" ("+p.Usage()+")")
	}
	return "cloud provider: " + strings.Join(parts, ", ")
}

func (l List) names() []string {
	var names []string
	for _, p := range l {
		names = append(names, p.Name())
	}
	return names
}
