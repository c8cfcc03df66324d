package app

import (
	"context"
	"errors"
	goflag "flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/capstan-dev/capstan/api"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/controllers/apiauth"
	"github.com/capstan-dev/capstan/pkg/controllers/apply"
	disruptionctrl "github.com/capstan-dev/capstan/pkg/controllers/disruption"
	"github.com/capstan-dev/capstan/pkg/controllers/explainserver"
	"github.com/capstan-dev/capstan/pkg/controllers/garbagecollection"
	"github.com/capstan-dev/capstan/pkg/controllers/index"
	"github.com/capstan-dev/capstan/pkg/controllers/nodeclaim"
	"github.com/capstan-dev/capstan/pkg/controllers/nodepool"
	"github.com/capstan-dev/capstan/pkg/controllers/provisioner"
	"github.com/capstan-dev/capstan/pkg/controllers/termination"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// Options are everything `capstan controller` is configured with; parsed
// once from flags and passed down explicitly.
type Options struct {
	CloudProvider    string
	Sim              SimOptions
	AWS              AWSOptions
	BatchIdle        time.Duration
	BatchMax         time.Duration
	UnavailableTTL   time.Duration
	RegistrationTTL  time.Duration
	LaunchTimeout    time.Duration
	SchedulerNames   []string
	MaxInstanceTypes int
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
	opts := Options{}
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
			return runController(ctx, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.CloudProvider, "cloud-provider", providers()[0].name, providerUsage())
	for _, p := range providers() {
		p.bindFlags(f, &opts)
	}
	f.DurationVar(&opts.BatchIdle, "batch-idle-duration", time.Second, "close a batch of pending pods after this long without a new one")
	f.DurationVar(&opts.BatchMax, "batch-max-duration", 10*time.Second, "close a batch of pending pods at most this long after it opened")
	f.DurationVar(&opts.UnavailableTTL, "unavailable-offerings-ttl", cloudprovider.DefaultUnavailableOfferingsTTL, "how long an offering that ran out of capacity is not tried")
	f.DurationVar(&opts.RegistrationTTL, "registration-ttl", lifecycle.DefaultRegistrationTTL, "delete a NodeClaim whose node has not registered this long after launch")
	f.DurationVar(&opts.LaunchTimeout, "launch-timeout", lifecycle.DefaultLaunchTimeout, "delete a NodeClaim not launched this long after its first failed launch, so its pods are planned again")
	f.StringSliceVar(&opts.SchedulerNames, "scheduler-names", []string{corev1.DefaultSchedulerName}, "provision for pending pods of these schedulers")
	f.IntVar(&opts.MaxInstanceTypes, "max-instance-types", 60, "instance-type options per NodeClaim")
	f.DurationVar(&opts.GCInterval, "gc-interval", time.Minute, "how often leaked instances and orphaned NodeClaims are collected")
	f.DurationVar(&opts.GCGrace, "gc-grace", time.Minute, "how old an instance without a NodeClaim must be to count as leaked")
	opts.testHooks.bindFlags(cmd)
	opts.Disruption = newDisruptionFlags(f)
	f.StringVar(&opts.MetricsAddr, "metrics-bind-address", "127.0.0.1:8080", "address of Prometheus metrics and the /explain/ endpoints `capstan explain` asks; localhost only by default (0 disables both)")
	f.BoolVar(&opts.MetricsSecure, "metrics-secure", false, "serve metrics and /explain/ over HTTPS, requiring a bearer token the API server accepts and RBAC for what is asked (production; see docs/security.md)")
	f.StringVar(&opts.MetricsCertDir, "metrics-cert-dir", "", "directory with tls.crt and tls.key for --metrics-secure (default: a self-signed certificate)")
	f.StringVar(&opts.HealthAddr, "health-probe-bind-address", ":8081", "health and readiness probe address")
	f.BoolVar(&opts.LeaderElect, "leader-elect", true, "elect a leader with a Lease so only one replica acts")
	f.StringVar(&opts.LeaderNamespace, "leader-election-namespace", "kube-system", "namespace of the leader-election Lease")
	logFlags := goflag.NewFlagSet("log", goflag.ContinueOnError)
	opts.Zap.BindFlags(logFlags)
	f.AddGoFlagSet(logFlags)
	return cmd
}

func runController(ctx context.Context, opts Options) error {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts.Zap)))
	chosen, err := providerNamed(opts.CloudProvider)
	if err != nil {
		return err
	}
	scheme, err := api.NewScheme()
	if err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig, %w", err)
	}
	// The explain endpoints share the metrics server; their handler is
	// built once the cloud and the snapshot exist.
	explainMux := http.NewServeMux()
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:                  scheme,
		Metrics:                 metricsOptions(opts, explainMux),
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
	started, err := chosen.start(ctx, opts, providerEnv{mgr: mgr, clock: clk, unavailable: unavailable, metrics: ctrlmetrics.Registry})
	if err != nil {
		return err
	}
	metrics, err := registerMetrics(ctrlmetrics.Registry, mgr.GetClient(), started.cloud)
	if err != nil {
		return err
	}
	cp := metrics.cloud
	cluster := &clusterstate.Cluster{Client: mgr.GetClient(), Cloud: cp, SchedulerNames: opts.SchedulerNames}
	prov := provisioner.New(mgr.GetClient(), cluster, mgr.GetEventRecorder("capstan"), clk, metrics.provisioner, provisioner.Options{
		Window: scaleup.Window{Idle: opts.BatchIdle, Max: opts.BatchMax}, SchedulerNames: opts.SchedulerNames,
		Plan: scaleup.Options{MaxInstanceTypes: opts.MaxInstanceTypes, Models: provisioner.APIModelLookup(mgr.GetClient()), Unavailable: unavailable},
	})
	explainMux.Handle(explainserver.Path, explainserver.New(mgr.GetClient(), cluster, explainserver.Options{
		Plan: scaleup.Options{
			MaxInstanceTypes: opts.MaxInstanceTypes, Models: provisioner.APIModelLookup(mgr.GetClient()), Unavailable: unavailable,
		},
		SchedulerNames: opts.SchedulerNames, Drift: opts.Disruption.Drift(), SpotToSpot: opts.Disruption.Gates().SpotToSpotConsolidation,
	}, clk).Handler())
	disrupt := disruptionctrl.New(mgr.GetClient(), mgr.GetAPIReader(), cluster, mgr.GetEventRecorder("capstan"), clk, metrics.disruption, disruptionctrl.Options{
		PollInterval: opts.Disruption.PollInterval, ValidationDelay: opts.Disruption.ValidationDelay,
		ReplacementTimeout: opts.Disruption.ReplacementTimeout, Gates: opts.Disruption.Gates(), Unavailable: unavailable,
		Models: provisioner.APIModelLookup(mgr.GetClient()),
	})
	src, ok := cloudprovider.AsInterruptionSource(cp)
	if !ok {
		return fmt.Errorf("cloud provider %s reports no interruptions", cp.Name())
	}
	interrupt := disruptionctrl.NewInterruption(mgr.GetClient(), src, unavailable, mgr.GetEventRecorder("capstan"), clk, metrics.disruption,
		disruptionctrl.InterruptionOptions{PreemptibleMargin: opts.Disruption.PreemptibleMargin})
	applier := apply.New(apply.Deps{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("capstan"), Cloud: cp, Unavailable: unavailable,
		Counters: apply.NewCounters(), Trigger: func(t effects.TriggerSolve) { prov.Trigger(t.Immediate) }, Clock: clk,
		AfterCreate: opts.testHooks.afterCreate(),
	})
	claims := nodeclaim.New(mgr.GetClient(), mgr.GetAPIReader(), applier, clk, lifecycle.Timeouts{Launch: opts.LaunchTimeout, Registration: opts.RegistrationTTL})
	if err := errors.Join(
		prov.Register(mgr),
		index.Register(ctx, mgr),
		claims.Register(mgr),
		nodeclaim.NewPodEvents(mgr.GetClient(), applier, clk).Register(mgr),
		termination.New(mgr.GetClient(), cp, mgr.GetEventRecorder("capstan"), clk, metrics.slack).Register(ctx, mgr),
		nodepool.New(mgr.GetClient(), clk, mgr.GetEventRecorder("capstan"), cp.GetSupportedNodeClasses()).Register(mgr),
		garbagecollection.New(mgr.GetClient(), cp, applier, clk, garbagecollection.Options{Interval: opts.GCInterval, Grace: opts.GCGrace}).Register(mgr),
		started.register(mgr),
		disrupt.Register(mgr),
		disruptionctrl.NewConditions(mgr.GetClient(), cp, mgr.GetEventRecorder("capstan"), clk, opts.Disruption.Drift()).Register(mgr),
		disruptionctrl.NewExpiration(mgr.GetClient(), mgr.GetEventRecorder("capstan"), clk, metrics.disruption).Register(mgr),
		interrupt.Register(mgr),
		registerCapacityBlocks(mgr, cp, clk, metrics.disruption),
	); err != nil {
		return fmt.Errorf("registering controllers, %w", err)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running manager, %w", err)
	}
	return nil
}

// registerCapacityBlocks adds the capacity-block controller when the
// cloud has capacity blocks (the AWS provider and the simulated cloud do).
func registerCapacityBlocks(mgr manager.Manager, cp cloudprovider.CloudProvider, clk clock.Clock, metrics *disruptionctrl.Metrics) error {
	src, ok := cloudprovider.AsCapacityBlockSource(cp)
	if !ok {
		return nil
	}
	return disruptionctrl.NewCapacityBlocks(mgr.GetClient(), src, mgr.GetEventRecorder("capstan"), clk, metrics).Register(mgr)
}

// metricsOptions serve metrics and explain: over HTTPS behind the API
// server's authentication and authorization with --metrics-secure, else
// plain HTTP for development (bound to localhost by default).
func metricsOptions(opts Options, explain http.Handler) metricsserver.Options {
	o := metricsserver.Options{BindAddress: opts.MetricsAddr, ExtraHandlers: map[string]http.Handler{explainserver.Path: explain}}
	if opts.MetricsSecure {
		o.SecureServing, o.CertDir, o.FilterProvider = true, opts.MetricsCertDir, apiauth.FilterProvider
	}
	return o
}
