package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	certutil "k8s.io/client-go/util/cert"

	"github.com/capstan-dev/capstan/pkg/simulator"
)

// controllerOptions are the controller's flags as parsed from args,
// every provider's included.
func controllerOptions(t *testing.T, args ...string) Options {
	t.Helper()
	cmd := &cobra.Command{}
	opts := Options{Providers: providerList()}
	opts.bindFlags(cmd)
	if err := cmd.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	return opts
}

func TestControllerOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		// args are flags parsed before mod runs (a provider's flags are
		// its own, set through them).
		args []string
		mod  func(*Options)
		want []string // substrings of the error; none means valid
	}{
		{name: "defaults", mod: func(*Options) {}},
		{name: "disabled addresses", mod: func(o *Options) { o.MetricsAddr, o.HealthAddr = "0", "0" }},
		{name: "all interfaces and IPv6", mod: func(o *Options) { o.MetricsAddr, o.HealthAddr = ":8080", "[::1]:8081" }},
		{name: "host name", mod: func(o *Options) { o.MetricsAddr = "localhost:0" }},
		{name: "equal windows", mod: func(o *Options) { o.BatchIdle, o.BatchMax = time.Second, time.Second }},
		{name: "no leader election, no namespace", mod: func(o *Options) { o.LeaderElect, o.LeaderNamespace = false, "" }},
		{name: "unknown cloud", mod: func(o *Options) { o.CloudProvider = "gcp" }, want: []string{"--cloud-provider"}},
		{name: "aws with a cluster name", args: []string{"--cloud-provider=aws", "--cluster-name=prod"}, mod: func(*Options) {}},
		{name: "aws without a cluster name", mod: func(o *Options) { o.CloudProvider = "aws" }, want: []string{"--cluster-name is required"}},
		{name: "aws with a memory overhead of 100%", args: []string{"--cloud-provider=aws", "--cluster-name=prod", "--vm-memory-overhead-percent=1"}, mod: func(*Options) {},
			want: []string{"--vm-memory-overhead-percent 1 is not in [0, 1)"}},
		{name: "aws with no refresh", args: []string{"--cloud-provider=aws", "--cluster-name=prod", "--aws-refresh-interval=0s"}, mod: func(*Options) {},
			want: []string{"--aws-refresh-interval must be positive"}},
		{name: "sim ignores the aws flags", args: []string{"--vm-memory-overhead-percent=7"}, mod: func(*Options) {}},
		{name: "zero registration ttl", mod: func(o *Options) { o.RegistrationTTL = 0 }, want: []string{"--registration-ttl must be positive"}},
		{name: "zero launch timeout", mod: func(o *Options) { o.LaunchTimeout = 0 }, want: []string{"--launch-timeout must be positive"}},
		{name: "zero atomic group launch timeout", mod: func(o *Options) { o.AtomicGroupLaunchTimeout = 0 }, want: []string{"--atomic-group-launch-timeout must be positive"}},
		{name: "negative gc interval", mod: func(o *Options) { o.GCInterval = -time.Second }, want: []string{"--gc-interval must be positive, got -1s"}},
		{name: "zero gc grace", mod: func(o *Options) { o.GCGrace = 0 }, want: []string{"--gc-grace"}},
		{name: "zero idle", mod: func(o *Options) { o.BatchIdle = 0 }, want: []string{"--batch-idle-duration must be positive"}},
		{name: "zero max", mod: func(o *Options) { o.BatchMax = 0 }, want: []string{"--batch-max-duration must be positive"}},
		{name: "idle over max", mod: func(o *Options) { o.BatchIdle, o.BatchMax = time.Minute, time.Second }, want: []string{"--batch-idle-duration 1m0s must not exceed --batch-max-duration 1s"}},
		{name: "zero unavailable ttl", mod: func(o *Options) { o.UnavailableTTL = 0 }, want: []string{"--unavailable-offerings-ttl"}},
		{name: "zero instance types", mod: func(o *Options) { o.MaxInstanceTypes = 0 }, want: []string{"--max-instance-types must be between 1 and 100, got 0"}},
		{name: "no nodeclaim workers", mod: func(o *Options) { o.NodeClaimWorkers = 0 }, want: []string{"--nodeclaim-max-concurrent-reconciles must be at least 1, got 0"}},
		{name: "too many instance types", mod: func(o *Options) { o.MaxInstanceTypes = 101 }, want: []string{"--max-instance-types"}},
		{name: "no scheduler", mod: func(o *Options) { o.SchedulerNames = nil }, want: []string{"--scheduler-names"}},
		{name: "empty scheduler", mod: func(o *Options) { o.SchedulerNames = []string{"a", ""} }, want: []string{"--scheduler-names"}},
		{name: "metrics without port", mod: func(o *Options) { o.MetricsAddr = "127.0.0.1" }, want: []string{`--metrics-bind-address "127.0.0.1" is not host:port`}},
		{name: "metrics named port", mod: func(o *Options) { o.MetricsAddr = ":http" }, want: []string{"--metrics-bind-address", "want a number"}},
		{name: "health port out of range", mod: func(o *Options) { o.HealthAddr = ":70000" }, want: []string{"--health-probe-bind-address"}},
		{name: "health bad host", mod: func(o *Options) { o.HealthAddr = "bad_host!:80" }, want: []string{"--health-probe-bind-address", "want an IP address or a DNS name"}},
		{name: "empty address", mod: func(o *Options) { o.HealthAddr = "" }, want: []string{"--health-probe-bind-address"}},
		{name: "bad lease namespace", mod: func(o *Options) { o.LeaderNamespace = "Kube_System" }, want: []string{"--leader-election-namespace"}},
		{name: "every error at once", mod: func(o *Options) { o.GCInterval, o.GCGrace, o.MaxInstanceTypes = 0, 0, 0 },
			want: []string{"--gc-interval", "--gc-grace", "--max-instance-types"}},
		// Loops paced by a flag cannot spin.
		{name: "least windows", mod: func(o *Options) { o.BatchIdle, o.BatchMax = MinBatchIdle, MinBatchMax }},
		{name: "idle of 1ms", mod: func(o *Options) { o.BatchIdle = time.Millisecond }, want: []string{"--batch-idle-duration must be at least 100ms, got 1ms"}},
		{name: "max of 1ns", mod: func(o *Options) { o.BatchIdle, o.BatchMax = MinBatchIdle, time.Nanosecond }, want: []string{"--batch-max-duration must be at least 1s, got 1ns"}},
		{name: "registration ttl of 1ms", mod: func(o *Options) { o.RegistrationTTL = time.Millisecond }, want: []string{"--registration-ttl must be at least 30s, got 1ms"}},
		{name: "least registration ttl", mod: func(o *Options) { o.RegistrationTTL = MinRegistrationTTL }},
		{name: "gc every 1ms", mod: func(o *Options) { o.GCInterval = time.Millisecond }, want: []string{"--gc-interval must be at least 1s, got 1ms"}},
		{name: "disruption poll of 1ms", args: []string{"--disruption-poll-interval=1ms"}, mod: func(*Options) {},
			want: []string{"--disruption-poll-interval must be at least 1s, got 1ms"}},
		{name: "least disruption poll", args: []string{"--disruption-poll-interval=1s"}, mod: func(*Options) {}},
		{name: "preemptible margin of half the lifetime", args: []string{"--preemptible-replacement-margin=12h"}, mod: func(*Options) {}},
		{name: "preemptible margin of the lifetime", args: []string{"--preemptible-replacement-margin=24h"}, mod: func(*Options) {},
			want: []string{"--preemptible-replacement-margin must be at most 12h0m0s, half a preemptible VM's 24h0m0s lifetime", "got 24h0m0s"}},
		{name: "preemptible margin just over half", args: []string{"--preemptible-replacement-margin=12h1s"}, mod: func(*Options) {},
			want: []string{"--preemptible-replacement-margin must be at most 12h0m0s"}},
		// Values parsed at start-up.
		{name: "memory overhead NaN", args: []string{"--cloud-provider=aws", "--cluster-name=prod", "--vm-memory-overhead-percent=NaN"}, mod: func(*Options) {},
			want: []string{"--vm-memory-overhead-percent NaN is not in [0, 1)"}},
		{name: "garbage service cidr", args: []string{"--cloud-provider=aws", "--cluster-name=prod", "--service-cidr=10.0.0.0/99"}, mod: func(*Options) {},
			want: []string{`--service-cidr "10.0.0.0/99" is not a CIDR`}},
		{name: "sim without a state file", args: []string{"--sim-state="}, mod: func(*Options) {}, want: []string{"--sim-state must name"}},
		{name: "metrics certificate", mod: func(o *Options) { o.MetricsSecure, o.MetricsCertDir = true, certDir(t, true) }},
		{name: "missing metrics cert dir", mod: func(o *Options) { o.MetricsSecure, o.MetricsCertDir = true, "/nonexistent" },
			want: []string{`--metrics-cert-dir "/nonexistent": reading tls.crt, open /nonexistent/tls.crt: no such file or directory`}},
		{name: "metrics cert dir without a key", mod: func(o *Options) { o.MetricsSecure, o.MetricsCertDir = true, certDir(t, false) },
			want: []string{"--metrics-cert-dir", "reading tls.key", "no such file or directory"}},
		{name: "metrics cert dir of garbage", mod: func(o *Options) { o.MetricsSecure, o.MetricsCertDir = true, garbageCertDir(t) },
			want: []string{"--metrics-cert-dir", "tls.crt and tls.key are no certificate and its key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := controllerOptions(t, tc.args...)
			tc.mod(&opts)
			checkValidate(t, opts.Validate(), tc.want)
		})
	}
}

func TestSimulateOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*SimulateOptions)
		want []string
		// args are disruption flags, parsed before mod runs.
		args []string
	}{
		{name: "defaults", mod: func(*SimulateOptions) {}},
		{name: "json", mod: func(o *SimulateOptions) { o.Output = "json" }},
		{name: "seed zero", mod: func(o *SimulateOptions) { o.Simulator.Seed = 0 }},
		{name: "unknown output", mod: func(o *SimulateOptions) { o.Output = "yaml" }, want: []string{`--output "yaml" is unknown`}},
		{name: "no files", mod: func(o *SimulateOptions) { o.Files = nil }, want: []string{"--filename is required"}},
		{name: "empty file", mod: func(o *SimulateOptions) { o.Files = []string{""} }, want: []string{"--filename must not be empty"}},
		{name: "zero duration", mod: func(o *SimulateOptions) { o.Simulator.Duration = 0 }, want: []string{"--duration must be positive"}},
		{name: "huge duration", mod: func(o *SimulateOptions) { o.Simulator.Duration = 1000 * time.Hour }, want: []string{"--duration 1000h0m0s is longer than"}},
		{name: "idle over max", mod: func(o *SimulateOptions) { o.Simulator.Window.Idle = time.Hour }, want: []string{"--batch-idle-duration 1h0m0s must not exceed"}},
		{name: "negative max", mod: func(o *SimulateOptions) { o.Simulator.Window.Max = -1 }, want: []string{"--batch-max-duration must be positive"}},
		{name: "zero unavailable ttl", mod: func(o *SimulateOptions) { o.Simulator.UnavailableTTL = 0 }, want: []string{"--unavailable-offerings-ttl"}},
		{name: "instance types", mod: func(o *SimulateOptions) { o.Simulator.MaxInstanceTypes = -3 }, want: []string{"--max-instance-types"}},
		// The controller's bounds hold in simulate, where a spinning loop
		// is a run that never ends.
		{name: "max of 1ms", mod: func(o *SimulateOptions) { o.Simulator.Window.Max = time.Millisecond }, want: []string{"--batch-max-duration must be at least 1s, got 1ms"}},
		{name: "idle of 1ns", mod: func(o *SimulateOptions) { o.Simulator.Window.Idle = time.Nanosecond }, want: []string{"--batch-idle-duration must be at least 100ms, got 1ns"}},
		{name: "registration ttl of 1ms", mod: func(o *SimulateOptions) { o.Simulator.RegistrationTTL = time.Millisecond }, want: []string{"--registration-ttl must be at least 30s, got 1ms"}},
		{name: "registration ttl just under", mod: func(o *SimulateOptions) { o.Simulator.RegistrationTTL = MinRegistrationTTL - time.Nanosecond }, want: []string{"--registration-ttl must be at least 30s"}},
		{name: "least registration ttl", mod: func(o *SimulateOptions) { o.Simulator.RegistrationTTL = MinRegistrationTTL }},
		{name: "disruption poll of 1ns", args: []string{"--disruption-poll-interval=1ns"}, mod: func(*SimulateOptions) {},
			want: []string{"--disruption-poll-interval must be at least 1s, got 1ns"}},
		{name: "preemptible margin of a day", args: []string{"--preemptible-replacement-margin=24h"}, mod: func(*SimulateOptions) {},
			want: []string{"--preemptible-replacement-margin must be at most 12h0m0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := SimulateOptions{Files: []string{"x.yaml"}, Output: "text", Simulator: simulator.DefaultOptions()}
			f := pflag.NewFlagSet("simulate", pflag.ContinueOnError)
			opts.Disruption = newDisruptionFlags(f)
			if err := f.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			tc.mod(&opts)
			checkValidate(t, opts.Validate(), tc.want)
		})
	}
}

func checkValidate(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("Validate() = %v, want nil", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("Validate() = nil, want an error with %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Validate() = %v, want it to contain %q", err, w)
		}
	}
}

// Invalid flags fail the command before anything starts: no kubeconfig is
// read, no manifest loaded.
func TestInvalidFlagsStopTheCommands(t *testing.T) {
	t.Setenv("KUBECONFIG", "/nonexistent")
	_, err := run(t, "controller", "--gc-interval=0s", "--batch-idle-duration=1m", "--metrics-bind-address=nope")
	for _, w := range []string{"invalid flags", "--gc-interval", "--batch-idle-duration", "--metrics-bind-address"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("controller with bad flags: err = %v, want it to contain %q", err, w)
		}
	}
	_, err = run(t, "simulate", "-f", "/nonexistent.yaml", "--duration=0s")
	if err == nil || !strings.Contains(err.Error(), "--duration must be positive") {
		t.Errorf("simulate --duration=0s: err = %v, want a --duration error before reading the file", err)
	}
}

// certDir is a directory holding a self-signed certificate as tls.crt
// and, with key, its key as tls.key.
func certDir(t *testing.T, key bool) string {
	t.Helper()
	crt, k, err := certutil.GenerateSelfSignedCertKey("localhost", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{"tls.crt": crt}
	if key {
		files["tls.key"] = k
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// garbageCertDir holds a tls.crt and a tls.key that are not PEM.
func garbageCertDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"tls.crt", "tls.key"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("not pem"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
