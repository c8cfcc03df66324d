package app

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/capstan-dev/capstan/pkg/readlimit"
)

// MaxInstanceTypesLimit bounds --max-instance-types: a NodeClaim's
// requirement takes at most 100 values (api/v1 requirements' MaxItems).
const MaxInstanceTypesLimit = 100

// The least values of the flags that pace a loop, so none spins: each is
// a pass over the cluster (a solve, a disruption evaluation, a list of
// every instance). docs/security.md ("Input limits") lists them.
const (
	// MinBatchIdle bounds --batch-idle-duration: a shorter wait only
	// splits a burst of pods (a Deployment's replicas arrive over tens
	// of milliseconds) into more batches, a solve each.
	MinBatchIdle = 100 * time.Millisecond
	// MinBatchMax bounds --batch-max-duration: while pods stay pending,
	// a batch closes, and the pods are solved for, this often.
	MinBatchMax = time.Second
	// MinPollInterval bounds --disruption-poll-interval, a tenth of the
	// default (the reference's 10 s).
	MinPollInterval = time.Second
	// MinGCInterval bounds --gc-interval: each round lists the cloud's
	// instances.
	MinGCInterval = time.Second
	// MinRegistrationTTL bounds --registration-ttl: a registration
	// timeout deletes the NodeClaim and solves again at once, so a TTL
	// below a node's boot times out every launch, one after another
	// without end (the e2e faults suite uses 30s).
	MinRegistrationTTL = 30 * time.Second
)

// Validate checks every flag of `capstan controller` before anything
// starts; each error names its flag.
func (o Options) Validate() error {
	var errs []error
	if p, err := o.Providers.Named(o.CloudProvider); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, p.Validate())
	}
	errs = append(errs,
		validateWindow(o.BatchIdle, o.BatchMax),
		positive("--unavailable-offerings-ttl", o.UnavailableTTL),
		atLeast("--registration-ttl", o.RegistrationTTL, MinRegistrationTTL),
		positive("--launch-timeout", o.LaunchTimeout),
		positive("--atomic-group-launch-timeout", o.AtomicGroupLaunchTimeout),
		atLeast("--gc-interval", o.GCInterval, MinGCInterval),
		positive("--gc-grace", o.GCGrace),
		validateMaxInstanceTypes(o.MaxInstanceTypes),
		validateNodeClaimWorkers(o.NodeClaimWorkers),
		validateSchedulerNames(o.SchedulerNames),
		validateBindAddress("--metrics-bind-address", o.MetricsAddr),
		validateBindAddress("--health-probe-bind-address", o.HealthAddr),
		validateCertDir(o.MetricsCertDir),
	)
	if o.Disruption != nil {
		errs = append(errs, o.Disruption.validate())
	}
	if o.LeaderElect {
		for _, msg := range validation.IsDNS1123Label(o.LeaderNamespace) {
			errs = append(errs, fmt.Errorf("--leader-election-namespace %q is not a namespace name: %s", o.LeaderNamespace, msg))
		}
	}
	return errors.Join(errs...)
}

// Validate checks every flag of `capstan simulate` before anything is
// read; each error names its flag.
func (o SimulateOptions) Validate() error {
	var errs []error
	if o.Output != "text" && o.Output != "json" {
		errs = append(errs, fmt.Errorf("--output %q is unknown (want text or json)", o.Output))
	}
	if len(o.Files) == 0 {
		errs = append(errs, errors.New("--filename is required"))
	}
	for _, f := range o.Files {
		if f == "" {
			errs = append(errs, errors.New("--filename must not be empty"))
			break
		}
	}
	s := o.Simulator
	errs = append(errs, positive("--duration", s.Duration))
	if s.Duration > MaxSimulateDuration {
		errs = append(errs, fmt.Errorf("--duration %s is longer than %s", s.Duration, MaxSimulateDuration))
	}
	errs = append(errs,
		validateWindow(s.Window.Idle, s.Window.Max),
		positive("--unavailable-offerings-ttl", s.UnavailableTTL),
		atLeast("--registration-ttl", s.RegistrationTTL, MinRegistrationTTL),
		positive("--launch-timeout", s.LaunchTimeout),
		validateMaxInstanceTypes(s.MaxInstanceTypes),
		validateSchedulerNames(s.SchedulerNames),
	)
	if o.Disruption != nil {
		errs = append(errs, o.Disruption.validate())
	}
	return errors.Join(errs...)
}

// MaxSimulateDuration bounds --duration: virtual time is cheap, but not
// free (every batch window and sample is a step).
const MaxSimulateDuration = 30 * 24 * time.Hour

func positive(flag string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s must be positive, got %s", flag, d)
	}
	return nil
}

// atLeast checks that d is positive and no shorter than least.
func atLeast(flag string, d, least time.Duration) error {
	if err := positive(flag, d); err != nil {
		return err
	}
	if d < least {
		return fmt.Errorf("%s must be at least %s, got %s", flag, least, d)
	}
	return nil
}

// validateWindow checks the batch windows: each at least its least, idle
// no longer than max.
func validateWindow(idle, maxDur time.Duration) error {
	errs := []error{atLeast("--batch-idle-duration", idle, MinBatchIdle), atLeast("--batch-max-duration", maxDur, MinBatchMax)}
	if idle > 0 && maxDur > 0 && idle > maxDur {
		errs = append(errs, fmt.Errorf("--batch-idle-duration %s must not exceed --batch-max-duration %s", idle, maxDur))
	}
	return errors.Join(errs...)
}

func validateNodeClaimWorkers(n int) error {
	if n < 1 {
		return fmt.Errorf("--nodeclaim-max-concurrent-reconciles must be at least 1, got %d", n)
	}
	return nil
}

func validateMaxInstanceTypes(n int) error {
	if n < 1 || n > MaxInstanceTypesLimit {
		return fmt.Errorf("--max-instance-types must be between 1 and %d, got %d", MaxInstanceTypesLimit, n)
	}
	return nil
}

func validateSchedulerNames(names []string) error {
	if len(names) == 0 {
		return errors.New("--scheduler-names must name at least one scheduler")
	}
	for _, n := range names {
		if n == "" {
			return errors.New("--scheduler-names must not hold an empty name")
		}
	}
	return nil
}

// validateBindAddress accepts "0" (disabled) or host:port with a numeric
// port and an empty host, an IP or a DNS name.
func validateBindAddress(flag, addr string) error {
	if addr == "0" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q is not host:port or 0, %w", flag, addr, err)
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p > 65535 {
		return fmt.Errorf("%s %q has port %q, want a number from 0 to 65535", flag, addr, port)
	}
	if host != "" && net.ParseIP(host) == nil && len(validation.IsDNS1123Subdomain(host)) > 0 {
		return fmt.Errorf("%s %q has host %q, want an IP address or a DNS name", flag, addr, host)
	}
	return nil
}

// The files --metrics-cert-dir holds, as controller-runtime's metrics
// server reads them (metricsOptions names them).
const (
	certFile = "tls.crt"
	keyFile  = "tls.key"
	// MaxCertBytes caps each of them: a certificate chain is a few KiB.
	MaxCertBytes = 1 << 20
)

// validateCertDir checks that a --metrics-cert-dir holds a certificate
// and its key. The metrics server would otherwise fall back, silently, to
// a self-signed certificate when the files are missing.
func validateCertDir(dir string) error {
	if dir == "" {
		return nil
	}
	var pem [2][]byte
	for i, name := range []string{certFile, keyFile} {
		data, err := readlimit.File(filepath.Join(dir, name), MaxCertBytes)
		if err != nil {
			return fmt.Errorf("--metrics-cert-dir %q: reading %s, %w", dir, name, err)
		}
		pem[i] = data
	}
	if _, err := tls.X509KeyPair(pem[0], pem[1]); err != nil {
		return fmt.Errorf("--metrics-cert-dir %q: %s and %s are no certificate and its key, %w", dir, certFile, keyFile, err)
	}
	return nil
}
