package aws

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	awscloud "github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/pkg/controllers/ec2nodeclass"
	"github.com/capstan-dev/capstan/pkg/providers"
)

// Options are the AWS provider's flags.
type Options struct {
	Region, Endpoint, PricingEndpoint string
	InterruptionQueue, SQSEndpoint    string
	IAMEndpoint, EKSEndpoint          string
	SSMEndpoint                       string
	ClusterName                       string
	ClusterEndpoint                   string
	ClusterCABundle                   string
	ServiceCIDR                       string
	VMMemoryOverheadPercent           float64
	ReservedENIs                      int
	RefreshInterval                   time.Duration
	IsolatedVPC                       bool
	// NodeClassRefresh is how often a Ready EC2NodeClass's selectors are
	// resolved again (a new image matching them drifts its nodes).
	NodeClassRefresh time.Duration
	InterruptionWait time.Duration
}

// MinRefreshInterval bounds --aws-refresh-interval: each refresh asks EC2
// and the Price List API for every instance type, price and capacity
// reservation.
const MinRefreshInterval = 10 * time.Second

// Provider is Amazon EC2.
type Provider struct {
	opts Options
}

var _ providers.Provider = (*Provider)(nil)

// New returns the provider, its options unbound.
func New() *Provider { return &Provider{} }

// Name implements providers.Provider.
func (*Provider) Name() string { return awscloud.Name }

// Usage implements providers.Provider.
func (*Provider) Usage() string { return "Amazon EC2, with EC2NodeClass" }

// BindFlags implements providers.Provider.
func (p *Provider) BindFlags(f *pflag.FlagSet) {
	o := &p.opts
	f.StringVar(&o.Region, "aws-region", "", "AWS region (default: the SDK's, e.g. AWS_REGION)")
	f.StringVar(&o.Endpoint, "aws-endpoint", "", "EC2 endpoint URL instead of the region's (a local EC2 endpoint in tests)")
	f.StringVar(&o.PricingEndpoint, "aws-pricing-endpoint", "", "Price List API endpoint URL instead of the partition's (us-east-1, ap-south-1, eu-central-1 or cn-northwest-1)")
	f.BoolVar(&o.IsolatedVPC, "isolated-vpc", false, "the VPC cannot reach the Price List API: on-demand prices come from the embedded table only")
	f.StringVar(&o.InterruptionQueue, "interruption-queue", "", "SQS queue EventBridge sends the cluster's EC2 instance events to (spot interruptions, rebalance, scheduled changes, state changes); none: interruptions are not read")
	f.DurationVar(&o.InterruptionWait, "interruption-wait", awscloud.DefaultInterruptionWait,
		"how long one read of the interruption queue waits for a message (SQS long polling, whole seconds, 0 to 20s; 0: no wait)")
	f.StringVar(&o.SQSEndpoint, "aws-sqs-endpoint", "", "SQS endpoint URL instead of the region's")
	f.StringVar(&o.IAMEndpoint, "aws-iam-endpoint", "", "IAM endpoint URL instead of the partition's (instance profiles for an EC2NodeClass's role)")
	f.StringVar(&o.EKSEndpoint, "aws-eks-endpoint", "", "EKS endpoint URL instead of the region's (eks:DescribeCluster, what nodes join)")
	f.StringVar(&o.SSMEndpoint, "aws-ssm-endpoint", "", "SSM endpoint URL instead of the region's (the images amiSelectorTerms name by ssmParameter)")
	f.StringVar(&o.ClusterName, "cluster-name", "", "cluster name: tags every instance, and nodes join it")
	f.StringVar(&o.ClusterEndpoint, "cluster-endpoint", "", "API server URL nodes join (default: the EKS cluster's, from eks:DescribeCluster)")
	f.StringVar(&o.ClusterCABundle, "cluster-ca-bundle", "", "base64 PEM CA bundle of the API server, for nodes (default: the EKS cluster's, from eks:DescribeCluster)")
	f.StringVar(&o.ServiceCIDR, "service-cidr", "", "the cluster's service CIDR, for nodes (default: the EKS cluster's, from eks:DescribeCluster)")
	f.Float64Var(&o.VMMemoryOverheadPercent, "vm-memory-overhead-percent", 0.075, "share of an instance's memory the hypervisor keeps")
	f.IntVar(&o.ReservedENIs, "reserved-enis", 0, "network interfaces of each node's default network card kept for other uses (VPC CNI custom networking), left out of the pod limit and kube-reserved")
	f.DurationVar(&o.RefreshInterval, "aws-refresh-interval", 5*time.Minute, "how often instance types, prices and capacity reservations are reloaded")
	f.DurationVar(&o.NodeClassRefresh, "ec2nodeclass-refresh-interval", ec2nodeclass.DefaultRefreshPeriod, "how often a Ready EC2NodeClass's subnets, security groups, AMIs and reservations are resolved again (a new AMI matching its selector drifts its nodes)")
}

// Validate implements providers.Provider.
func (p *Provider) Validate() error {
	o := p.opts
	errs := []error{validateClusterName(o.ClusterName)}
	// Written so that NaN, which every comparison is false for, fails too.
	if !(o.VMMemoryOverheadPercent >= 0 && o.VMMemoryOverheadPercent < 1) {
		errs = append(errs, fmt.Errorf("--vm-memory-overhead-percent %g is not in [0, 1)", o.VMMemoryOverheadPercent))
	}
	if o.ReservedENIs < 0 {
		errs = append(errs, fmt.Errorf("--reserved-enis must not be negative, got %d", o.ReservedENIs))
	}
	if o.NodeClassRefresh < MinRefreshInterval {
		errs = append(errs, fmt.Errorf("--ec2nodeclass-refresh-interval must be at least %s, got %s", MinRefreshInterval, o.NodeClassRefresh))
	}
	switch {
	case o.RefreshInterval <= 0:
		errs = append(errs, fmt.Errorf("--aws-refresh-interval must be positive, got %s", o.RefreshInterval))
	case o.RefreshInterval < MinRefreshInterval:
		errs = append(errs, fmt.Errorf("--aws-refresh-interval must be at least %s, got %s", MinRefreshInterval, o.RefreshInterval))
	}
	if o.InterruptionWait < 0 || o.InterruptionWait > awscloud.DefaultInterruptionWait || o.InterruptionWait%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--interruption-wait must be whole seconds from 0 to %s (SQS's WaitTimeSeconds), got %s", awscloud.DefaultInterruptionWait, o.InterruptionWait))
	}
	for _, f := range []struct{ flag, url string }{
		{"--aws-endpoint", o.Endpoint}, {"--aws-pricing-endpoint", o.PricingEndpoint}, {"--aws-sqs-endpoint", o.SQSEndpoint},
		{"--aws-iam-endpoint", o.IAMEndpoint}, {"--aws-eks-endpoint", o.EKSEndpoint}, {"--aws-ssm-endpoint", o.SSMEndpoint},
		{"--cluster-endpoint", o.ClusterEndpoint},
	} {
		errs = append(errs, validateURL(f.flag, f.url))
	}
	errs = append(errs, validateServiceCIDR(o.ServiceCIDR), validateCABundle(o.ClusterCABundle))
	return errors.Join(errs...)
}

// AddToScheme implements providers.Provider.
func (*Provider) AddToScheme(s *runtime.Scheme) error { return awsv1.AddToScheme(s) }

// Start implements providers.Provider: it loads the SDK's configuration
// (credentials, region) and builds the EC2, pricing, SQS, IAM and EKS
// clients, every call measured on env.Metrics.
func (p *Provider) Start(ctx context.Context, env providers.Env) (providers.Started, error) {
	o := p.opts
	var load []func(*config.LoadOptions) error
	if o.Region != "" {
		load = append(load, config.WithRegion(o.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return providers.Started{}, fmt.Errorf("loading aws configuration, %w", err)
	}
	if cfg.Region == "" {
		return providers.Started{}, errors.New("no aws region: set --aws-region or AWS_REGION")
	}
	c, err := newClients(cfg, o, env.Metrics)
	if err != nil {
		return providers.Started{}, err
	}
	priceMetrics, err := awscloud.NewPriceMetrics(env.Metrics)
	if err != nil {
		return providers.Started{}, err
	}
	mgr := env.Manager
	cluster := &awscloud.ClusterDiscovery{
		EKS: c.eks, Name: o.ClusterName, Services: mgr.GetAPIReader(), Clock: env.Clock,
		Overrides: awscloud.Bootstrap{Endpoint: o.ClusterEndpoint, CABundle: o.ClusterCABundle, ServiceCIDR: o.ServiceCIDR},
	}
	cloud, err := awscloud.New(c.ec2, awscloud.Options{
		Region: cfg.Region, ClusterName: o.ClusterName, Clock: env.Clock, Unavailable: env.Unavailable,
		Pricing: c.pricing, IsolatedVPC: o.IsolatedVPC, PriceMetrics: priceMetrics,
		SQS: c.sqs, InterruptionQueue: o.InterruptionQueue, InterruptionWait: interruptionWait(o.InterruptionWait),
		NodeClasses:             awscloud.ClientNodeClasses{Client: mgr.GetClient()},
		VMMemoryOverheadPercent: o.VMMemoryOverheadPercent,
		ReservedENIs:            o.ReservedENIs,
		Cluster:                 cluster,
	})
	if err != nil {
		return providers.Started{}, err
	}
	version, err := kubernetesVersion(mgr)
	if err != nil {
		return providers.Started{}, err
	}
	return providers.Started{Cloud: cloud, Register: func(ctx context.Context, mgr manager.Manager) error {
		if err := mgr.Add(awscloud.Refresher{Provider: cloud, Interval: o.RefreshInterval}); err != nil {
			return fmt.Errorf("adding the aws catalog refresher, %w", err)
		}
		nodeClasses, err := ec2nodeclass.New(ec2nodeclass.Deps{
			Client: mgr.GetClient(), EC2: c.ec2, SSM: c.ssm, IAM: c.iam, Clock: env.Clock, Recorder: mgr.GetEventRecorder("capstan"), Cluster: cluster,
		}, ec2nodeclass.Options{KubernetesVersion: version, ClusterName: o.ClusterName, Region: cfg.Region,
			RefreshPeriod: o.NodeClassRefresh})
		if err != nil {
			return err
		}
		return nodeClasses.Register(ctx, mgr)
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

// interruptionWait is the flag's wait as the cloud's option, where zero
// means the default: a flag of 0 asks for no wait.
func interruptionWait(flag time.Duration) time.Duration {
	if flag == 0 {
		return -1
	}
	return flag
}
