package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	awsprovider "github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim/simapi"
	"github.com/capstan-dev/capstan/pkg/controllers/ec2nodeclass"
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
		NodeClasses: simapi.NodeClasses{Client: mgr.GetClient()},
		Kubelet:     &simapi.Kubelet{Client: mgr.GetClient(), Clock: env.clock},
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

// AWSOptions configure the AWS provider (--cloud-provider=aws).
type AWSOptions struct {
	Region, Endpoint, PricingEndpoint string
	InterruptionQueue, SQSEndpoint    string
	IAMEndpoint, EKSEndpoint          string
	ClusterName                       string
	ClusterEndpoint                   string
	ClusterCABundle                   string
	ServiceCIDR                       string
	VMMemoryOverheadPercent           float64
	RefreshInterval                   time.Duration
}

func awsProvider() provider {
	return provider{
		name: awsprovider.Name, usage: "Amazon EC2, with EC2NodeClass",
		bindFlags: func(f *pflag.FlagSet, opts *Options) {
			o := &opts.AWS
			f.StringVar(&o.Region, "aws-region", "", "AWS region (default: the SDK's, e.g. AWS_REGION)")
			f.StringVar(&o.Endpoint, "aws-endpoint", "", "EC2 endpoint URL instead of the region's (a local EC2 endpoint in tests)")
			f.StringVar(&o.PricingEndpoint, "aws-pricing-endpoint", "", "Price List API endpoint URL instead of us-east-1's")
			f.StringVar(&o.InterruptionQueue, "interruption-queue", "", "SQS queue EventBridge sends the cluster's EC2 instance events to (spot interruptions, rebalance, scheduled changes, state changes); none: interruptions are not read")
			f.StringVar(&o.SQSEndpoint, "aws-sqs-endpoint", "", "SQS endpoint URL instead of the region's")
			f.StringVar(&o.IAMEndpoint, "aws-iam-endpoint", "", "IAM endpoint URL instead of the partition's (instance profiles for an EC2NodeClass's role)")
			f.StringVar(&o.EKSEndpoint, "aws-eks-endpoint", "", "EKS endpoint URL instead of the region's (eks:DescribeCluster, what nodes join)")
			f.StringVar(&o.ClusterName, "cluster-name", "", "cluster name: tags every instance, and nodes join it")
			f.StringVar(&o.ClusterEndpoint, "cluster-endpoint", "", "API server URL nodes join (default: the EKS cluster's, from eks:DescribeCluster)")
			f.StringVar(&o.ClusterCABundle, "cluster-ca-bundle", "", "base64 PEM CA bundle of the API server, for nodes (default: the EKS cluster's, from eks:DescribeCluster)")
			f.StringVar(&o.ServiceCIDR, "service-cidr", "", "the cluster's service CIDR, for nodes (default: the EKS cluster's, from eks:DescribeCluster)")
			f.Float64Var(&o.VMMemoryOverheadPercent, "vm-memory-overhead-percent", 0.075, "share of an instance's memory the hypervisor keeps")
			f.DurationVar(&o.RefreshInterval, "aws-refresh-interval", 5*time.Minute, "how often instance types, prices and capacity reservations are reloaded")
		},
		validate: func(opts Options) error {
			o := opts.AWS
			var errs []error
			if o.ClusterName == "" {
				errs = append(errs, errors.New("--cluster-name is required with --cloud-provider=aws"))
			}
			if o.VMMemoryOverheadPercent < 0 || o.VMMemoryOverheadPercent >= 1 {
				errs = append(errs, fmt.Errorf("--vm-memory-overhead-percent %g is not in [0, 1)", o.VMMemoryOverheadPercent))
			}
			errs = append(errs, positive("--aws-refresh-interval", o.RefreshInterval))
			return errors.Join(errs...)
		},
		start: startAWS,
	}
}

func startAWS(ctx context.Context, opts Options, env providerEnv) (startedProvider, error) {
	o := opts.AWS
	var load []func(*config.LoadOptions) error
	if o.Region != "" {
		load = append(load, config.WithRegion(o.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return startedProvider{}, fmt.Errorf("loading aws configuration, %w", err)
	}
	if cfg.Region == "" {
		return startedProvider{}, errors.New("no aws region: set --aws-region or AWS_REGION")
	}
	apiMetrics, err := awsprovider.NewAPIMetrics(env.metrics)
	if err != nil {
		return startedProvider{}, err
	}
	httpClient := awsprovider.NewHTTPClient()
	api := ec2.NewFromConfig(cfg, func(eo *ec2.Options) {
		eo.HTTPClient = httpClient
		eo.APIOptions = append(eo.APIOptions, apiMetrics.Middleware)
		if o.Endpoint != "" {
			eo.BaseEndpoint = &o.Endpoint
		}
	})
	// The Price List API answers in us-east-1 for every region.
	prices := pricing.NewFromConfig(cfg, func(po *pricing.Options) {
		po.Region, po.HTTPClient = "us-east-1", httpClient
		po.APIOptions = append(po.APIOptions, apiMetrics.Middleware)
		if o.PricingEndpoint != "" {
			po.BaseEndpoint = &o.PricingEndpoint
		}
	})
	queue := sqs.NewFromConfig(cfg, func(so *sqs.Options) {
		so.HTTPClient = httpClient
		so.APIOptions = append(so.APIOptions, apiMetrics.Middleware)
		if o.SQSEndpoint != "" {
			so.BaseEndpoint = &o.SQSEndpoint
		}
	})
	// IAM makes the instance profiles of EC2NodeClasses with spec.role.
	iamAPI := iam.NewFromConfig(cfg, func(io *iam.Options) {
		io.HTTPClient = httpClient
		io.APIOptions = append(io.APIOptions, apiMetrics.Middleware)
		if o.IAMEndpoint != "" {
			io.BaseEndpoint = &o.IAMEndpoint
		}
	})
	// EKS says what nodes join, where the flags do not.
	eksAPI := eks.NewFromConfig(cfg, func(eo *eks.Options) {
		eo.HTTPClient = httpClient
		eo.APIOptions = append(eo.APIOptions, apiMetrics.Middleware)
		if o.EKSEndpoint != "" {
			eo.BaseEndpoint = &o.EKSEndpoint
		}
	})
	mgr := env.mgr
	cluster := &awsprovider.ClusterDiscovery{
		EKS: eksAPI, Name: o.ClusterName, Services: mgr.GetAPIReader(), Clock: env.clock,
		Overrides: awsprovider.Bootstrap{Endpoint: o.ClusterEndpoint, CABundle: o.ClusterCABundle, ServiceCIDR: o.ServiceCIDR},
	}
	p, err := awsprovider.New(api, awsprovider.Options{
		Region: cfg.Region, ClusterName: o.ClusterName, Clock: env.clock, Unavailable: env.unavailable, Pricing: prices,
		SQS: queue, InterruptionQueue: o.InterruptionQueue,
		NodeClasses:             awsprovider.ClientNodeClasses{Client: mgr.GetClient()},
		VMMemoryOverheadPercent: o.VMMemoryOverheadPercent,
		Cluster:                 cluster,
	})
	if err != nil {
		return startedProvider{}, err
	}
	version, err := kubernetesVersion(mgr)
	if err != nil {
		return startedProvider{}, err
	}
	return startedProvider{cloud: p, register: func(mgr manager.Manager) error {
		if err := mgr.Add(awsprovider.Refresher{Provider: p, Interval: o.RefreshInterval}); err != nil {
			return fmt.Errorf("adding the aws catalog refresher, %w", err)
		}
		c, err := ec2nodeclass.New(mgr.GetClient(), api, iamAPI, env.clock, mgr.GetEventRecorder("capstan"), ec2nodeclass.Options{
			KubernetesVersion: version, ClusterName: o.ClusterName, Region: cfg.Region, Cluster: cluster,
		})
		if err != nil {
			return err
		}
		return c.Register(mgr)
	}}, nil
}

// kubernetesVersion is the API server's version, which EKS AMI aliases
// are resolved for.
func kubernetesVersion(mgr manager.Manager) (string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return "", fmt.Errorf("building a discovery client, %w", err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("reading the API server's version, %w", err)
	}
	return v.GitVersion, nil
}
