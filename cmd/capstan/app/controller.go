package app

import (
	"context"
	"errors"
	goflag "flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/capstan-dev/capstan/api"
	"github.com/capstan-dev/capstan/pkg/buffers"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/controllers/apiauth"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	"github.com/capstan-dev/capstan/pkg/controllers/capacitybuffer"
	"github.com/capstan-dev/capstan/pkg/controllers/disrupter"
	"github.com/capstan-dev/capstan/pkg/controllers/explainserver"
	"github.com/capstan-dev/capstan/pkg/controllers/gangrelease"
	"github.com/capstan-dev/capstan/pkg/controllers/garbagecollection"
	"github.com/capstan-dev/capstan/pkg/controllers/index"
	"github.com/capstan-dev/capstan/pkg/controllers/nodeclaim"
	"github.com/capstan-dev/capstan/pkg/controllers/nodeoverlay"
	"github.com/capstan-dev/capstan/pkg/controllers/nodepool"
	"github.com/capstan-dev/capstan/pkg/controllers/provisioner"
	"github.com/capstan-dev/capstan/pkg/controllers/provisioningrequest"
	"github.com/capstan-dev/capstan/pkg/controllers/staticpool"
	"github.com/capstan-dev/capstan/pkg/controllers/termination"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/providers"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/provreq"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// Options are everything `capstan controller` is configured with; parsed
// once from flags and passed down explicitly.
type Options struct {
	CloudProvider string
	// Providers are the clouds to choose from, each holding its own
	// flags (providerList).
	Providers       providers.List
	BatchIdle       time.Duration
	BatchMax        time.Duration
	UnavailableTTL  time.Duration
	RegistrationTTL time.Duration
	LaunchTimeout   time.Duration
	// AtomicGroupLaunchTimeout is how long a gang's launch may take to
	// have every NodeClaim Launched before it is released.
	AtomicGroupLaunchTimeout time.Duration
	// NodeClaimWorkers bound the NodeClaims reconciled (launched) at once.
	NodeClaimWorkers int
	SchedulerNames   []string
	MaxInstanceTypes int
	// MinValuesPolicy and PreferencePolicy are the solver's relaxation
	// policies (policies.go).
	MinValuesPolicy  provisioning.MinValuesPolicy
	PreferencePolicy provisioning.PreferencePolicy
	GCInterval       time.Duration
	GCGrace          time.Duration
	// testHooks are the e2e build's test-only flags (crashhook_e2e.go);
	// empty in a normal build.
	testHooks   testHooks
	MetricsAddr string
	// MetricsSecure serves metrics and explain over HTTPS, each request
	// authenticated and authorized by the API server (apiauth).
	MetricsSecure   bool
	MetricsCertDir  string
	HealthAddr      string
	Disruption      *DisruptionFlags
	LeaderElect     bool
	LeaderNamespace string
	Zap             zap.Options
}

func newControllerCommand() *cobra.Command {
	opts := &Options{Providers: providerList()}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the autoscaler against the cluster in KUBECONFIG (or in-cluster)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Validate(); err != nil {
				return fmt.Errorf("invalid flags: %w", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runController(ctx, *opts)
		},
	}
	opts.bindFlags(cmd)
	return cmd
}

// bindFlags adds the controller's flags to cmd, every provider's
// included, parsed into o.
func (o *Options) bindFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.CloudProvider, "cloud-provider", o.Providers[0].Name(), o.Providers.Usage())
	for _, p := range o.Providers {
		p.BindFlags(f)
	}
	f.DurationVar(&o.BatchIdle, "batch-idle-duration", scaleup.DefaultBatchIdle, "close a batch of pending pods after this long without a new one")
	f.DurationVar(&o.BatchMax, "batch-max-duration", scaleup.DefaultBatchMax, "close a batch of pending pods at most this long after it opened")
	f.DurationVar(&o.UnavailableTTL, "unavailable-offerings-ttl", cloudprovider.DefaultUnavailableOfferingsTTL, "how long an offering that ran out of capacity is not tried")
	f.DurationVar(&o.RegistrationTTL, "registration-ttl", lifecycle.DefaultRegistrationTTL, "delete a NodeClaim whose node has not registered this long after launch")
	f.DurationVar(&o.LaunchTimeout, "launch-timeout", lifecycle.DefaultLaunchTimeout, "delete a NodeClaim not launched this long after its first failed launch, so its pods are planned again")
	f.DurationVar(&o.AtomicGroupLaunchTimeout, "atomic-group-launch-timeout", lifecycle.DefaultAtomicGroupLaunchTimeout, "release every NodeClaim of a gang's launch that runs no pod when not all are launched this long after the first was created (docs/batch.md)")
	f.IntVar(&o.NodeClaimWorkers, "nodeclaim-max-concurrent-reconciles", nodeclaim.DefaultMaxConcurrentReconciles, "NodeClaims the lifecycle controller reconciles, and so launches, at once")
	f.StringSliceVar(&o.SchedulerNames, "scheduler-names", []string{corev1.DefaultSchedulerName}, "provision for pending pods of these schedulers")
	f.IntVar(&o.MaxInstanceTypes, "max-instance-types", provisioning.DefaultMaxInstanceTypes, "instance-type options per NodeClaim")
	bindPolicyFlags(f, &o.MinValuesPolicy, &o.PreferencePolicy, provisioning.MinValuesPolicyStrict, provisioning.PreferencePolicyRespect, "")
	f.DurationVar(&o.GCInterval, "gc-interval", time.Minute, "how often leaked instances and orphaned NodeClaims are collected")
	f.DurationVar(&o.GCGrace, "gc-grace", time.Minute, "how old an instance without a NodeClaim must be to count as leaked")
	o.testHooks.bindFlags(cmd)
	o.Disruption = newDisruptionFlags(f)
	f.StringVar(&o.MetricsAddr, "metrics-bind-address", "127.0.0.1:8080", "address of Prometheus metrics and the /explain/ endpoints `capstan explain` asks; localhost only by default (0 disables both)")
	f.BoolVar(&o.MetricsSecure, "metrics-secure", false, "serve metrics and /explain/ over HTTPS, requiring a bearer token the API server accepts and RBAC for what is asked (production; see docs/security.md)")
	f.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "directory with tls.crt and tls.key for --metrics-secure (default: a self-signed certificate)")
	f.StringVar(&o.HealthAddr, "health-probe-bind-address", ":8081", "health and readiness probe address")
	f.BoolVar(&o.LeaderElect, "leader-elect", true, "elect a leader with a Lease so only one replica acts")
	f.StringVar(&o.LeaderNamespace, "leader-election-namespace", "kube-system", "namespace of the leader-election Lease")
	logFlags := goflag.NewFlagSet("log", goflag.ContinueOnError)
	o.Zap.BindFlags(logFlags)
	f.AddGoFlagSet(logFlags)
}

func runController(ctx context.Context, opts Options) error {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts.Zap)))
	chosen, err := opts.Providers.Named(opts.CloudProvider)
	if err != nil {
		return err
	}
	scheme, err := api.NewCoreScheme()
	if err != nil {
		return err
	}
	if err := chosen.AddToScheme(scheme); err != nil {
		return fmt.Errorf("adding %s's kinds to the scheme, %w", chosen.Name(), err)
	}
	cfg, err := getConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig, %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:                  scheme,
		Metrics:                 metricsOptions(opts),
		HealthProbeBindAddress:  opts.HealthAddr,
		LeaderElection:          opts.LeaderElect,
		LeaderElectionID:        "capstan-controller",
		LeaderElectionNamespace: opts.LeaderNamespace,
	})
	if err != nil {
		return fmt.Errorf("creating manager, %w", err)
	}
	if err := errors.Join(mgr.AddHealthzCheck("healthz", healthz.Ping), mgr.AddReadyzCheck("readyz", healthz.Ping)); err != nil {
		return fmt.Errorf("adding probes, %w", err)
	}
	clk := clock.RealClock{}
	unavailable := cloudprovider.NewUnavailableOfferings(clk, opts.UnavailableTTL)
	launchPrices := cloudprovider.NewLaunchPrices()
	started, err := chosen.Start(ctx, providers.Env{Manager: mgr, Clock: clk, Unavailable: unavailable, LaunchPrices: launchPrices, Metrics: ctrlmetrics.Registry})
	if err != nil {
		return err
	}
	metrics, err := registerMetrics(ctrlmetrics.Registry, mgr.GetClient(), started.Cloud)
	if err != nil {
		return err
	}
	cp := metrics.cloud
	cluster := &clusterstate.Cluster{Client: mgr.GetClient(), Cloud: cp, SchedulerNames: opts.SchedulerNames, Mapper: mgr.GetRESTMapper(), LaunchPrices: launchPrices,
		Sources: clusterstate.Sources{CapacityBuffers: opts.Disruption.CapacityBuffers()}}
	var prov *provisioner.Provisioner
	bufferCtl := capacitybuffer.New(capacitybuffer.Deps{Client: mgr.GetClient(), Clock: clk, Trigger: func() { prov.Trigger(false) }})
	var placed func(map[types.NamespacedName]buffers.Placement)
	if opts.Disruption.CapacityBuffers() {
		placed = bufferCtl.Placed
	}
	prov = provisioner.New(provisioner.Deps{
		Client: mgr.GetClient(), Cluster: cluster, Recorder: mgr.GetEventRecorder("capstan"), Clock: clk, Metrics: metrics.provisioner, Placed: placed,
	}, provisioner.Options{
		Window: scaleup.Window{Idle: opts.BatchIdle, Max: opts.BatchMax}, SchedulerNames: opts.SchedulerNames,
		Plan: scaleup.Options{MaxInstanceTypes: opts.MaxInstanceTypes, Unavailable: unavailable,
			MinValuesPolicy: opts.MinValuesPolicy, PreferencePolicy: opts.PreferencePolicy},
	})
	explain := explainserver.New(explainserver.Deps{Reader: mgr.GetClient(), Cluster: cluster, Clock: clk}, explainserver.Options{
		Plan: scaleup.Options{
			MaxInstanceTypes: opts.MaxInstanceTypes, Unavailable: unavailable,
			MinValuesPolicy: opts.MinValuesPolicy, PreferencePolicy: opts.PreferencePolicy,
		},
		SchedulerNames: opts.SchedulerNames, Drift: opts.Disruption.Drift(), SpotToSpot: opts.Disruption.Gates().SpotToSpotConsolidation,
		NodeRepair: opts.Disruption.Gates().NodeRepair, RepairPolicies: cp.RepairPolicies(),
	})
	counters := apply.NewCounters()
	metrics.disruption.Counters(counters)
	metrics.provisioner.Counters(counters)
	applier := apply.New(apply.Deps{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("capstan"), Cloud: cp, Unavailable: unavailable,
		Counters: counters, Trigger: func(t effects.TriggerSolve) { prov.Trigger(t.Immediate) }, Clock: clk,
		AfterCreate: opts.testHooks.afterCreate(),
	})
	if err := provisioningrequest.NewMetrics(ctrlmetrics.Registry, counters); err != nil {
		return err
	}
	disrupt := disrupter.New(disrupter.Deps{
		Reader: mgr.GetAPIReader(), Cluster: cluster, Applier: applier, Clock: clk, Metrics: metrics.disruption,
	}, disrupter.Options{
		PollInterval: opts.Disruption.PollInterval, ValidationDelay: opts.Disruption.ValidationDelay,
		ReplacementTimeout: opts.Disruption.ReplacementTimeout, Gates: opts.Disruption.Gates(), Unavailable: unavailable,
		RepairPolicies: cp.RepairPolicies(),
		Policies:       disruption.Policies{MinValues: opts.MinValuesPolicy, Preference: opts.PreferencePolicy},
	})
	src, ok := cloudprovider.AsInterruptionSource(cp)
	if !ok {
		return fmt.Errorf("cloud provider %s reports no interruptions", cp.Name())
	}
	ack, _ := cloudprovider.AsInterruptionAcknowledger(cp)
	interrupt := disrupter.NewInterruption(disrupter.InterruptionDeps{Client: mgr.GetClient(), Source: src, Ack: ack, Applier: applier, Clock: clk},
		disrupter.InterruptionOptions{PreemptibleMargin: opts.Disruption.PreemptibleMargin})
	claims := nodeclaim.New(nodeclaim.Deps{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Applier: applier, Clock: clk},
		nodeclaim.Options{Timeouts: lifecycle.Timeouts{Launch: opts.LaunchTimeout, Registration: opts.RegistrationTTL}, MaxConcurrentReconciles: opts.NodeClaimWorkers})
	if err := errors.Join(
		prov.Register(ctx, mgr),
		index.Register(ctx, mgr),
		claims.Register(ctx, mgr),
		nodeclaim.NewPodEvents(nodeclaim.PodEventsDeps{Client: mgr.GetClient(), Applier: applier, Clock: clk}).Register(ctx, mgr),
		termination.New(termination.Deps{
			Client: mgr.GetClient(), Cloud: cp, Recorder: mgr.GetEventRecorder("capstan"), Clock: clk, Slack: metrics.slack,
		}).Register(ctx, mgr),
		provisioningrequest.New(provisioningrequest.Deps{Client: mgr.GetClient(), Cluster: cluster, Applier: applier, Clock: clk},
			provreq.Options{}).Register(ctx, mgr),
		staticpool.New(staticpool.Deps{
			Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("capstan"), Clock: clk, Counters: counters,
		}).Register(ctx, mgr),
		nodepool.New(nodepool.Deps{Client: mgr.GetClient(), Clock: clk, Recorder: mgr.GetEventRecorder("capstan")},
			nodepool.Options{NodeClasses: cp.GetSupportedNodeClasses()}).Register(ctx, mgr),
		nodeoverlay.New(nodeoverlay.Deps{Client: mgr.GetClient(), Cloud: cp, Clock: clk}).Register(ctx, mgr),
		gangrelease.New(gangrelease.Deps{Client: mgr.GetClient(), Applier: applier, Clock: clk},
			gangrelease.Options{LaunchTimeout: opts.AtomicGroupLaunchTimeout}).Register(ctx, mgr),
		garbagecollection.New(garbagecollection.Deps{Client: mgr.GetClient(), Cloud: cp, Applier: applier, Clock: clk},
			garbagecollection.Options{Interval: opts.GCInterval, Grace: opts.GCGrace}).Register(ctx, mgr),
		started.Register(ctx, mgr),
		explain.Register(ctx, mgr),
		disrupt.Register(ctx, mgr),
		disrupter.NewConditions(disrupter.ConditionsDeps{
			Client: mgr.GetClient(), Cloud: cp, Applier: applier, Clock: clk,
		}, disrupter.ConditionsOptions{Drift: opts.Disruption.Drift(), NodeClasses: cp.GetSupportedNodeClasses()}).Register(ctx, mgr),
		disrupter.NewExpiration(disrupter.ExpirationDeps{Client: mgr.GetClient(), Applier: applier, Clock: clk}).Register(ctx, mgr),
		interrupt.Register(ctx, mgr),
		registerCapacityBlocks(ctx, mgr, cp, applier, clk),
		registerIf(ctx, mgr, opts.Disruption.CapacityBuffers(), bufferCtl.Register),
	); err != nil {
		return fmt.Errorf("registering controllers, %w", err)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running manager, %w", err)
	}
	return nil
}

// registerIf registers a controller behind a feature gate when it is on.
func registerIf(ctx context.Context, mgr manager.Manager, on bool, register func(context.Context, manager.Manager) error) error {
	if !on {
		return nil
	}
	return register(ctx, mgr)
}

// registerCapacityBlocks adds the capacity-block controller when the
// cloud has capacity blocks (the AWS provider and the simulated cloud do).
func registerCapacityBlocks(ctx context.Context, mgr manager.Manager, cp cloudprovider.CloudProvider, applier *apply.Applier, clk clock.Clock) error {
	src, ok := cloudprovider.AsCapacityBlockSource(cp)
	if !ok {
		return nil
	}
	return disrupter.NewCapacityBlocks(disrupter.CapacityBlocksDeps{Client: mgr.GetClient(), Source: src, Applier: applier, Clock: clk}).Register(ctx, mgr)
}

// metricsOptions serve metrics and explain (explainserver.Register mounts
// it on the same server): over HTTPS behind the API server's
// authentication and authorization with --metrics-secure, else plain
// HTTP for development (bound to localhost by default).
func metricsOptions(opts Options) metricsserver.Options {
	o := metricsserver.Options{BindAddress: opts.MetricsAddr}
	if opts.MetricsSecure {
		o.SecureServing, o.CertDir, o.CertName, o.KeyName, o.FilterProvider = true, opts.MetricsCertDir, certFile, keyFile, apiauth.FilterProvider
	}
	return o
}
