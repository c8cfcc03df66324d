package app

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// MaxInstanceTypesLimit bounds --max-instance-types: a NodeClaim's
// requirement takes at most 100 values (api/v1 requirements' MaxItems).
const MaxInstanceTypesLimit = 100

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
		positive("--registration-ttl", o.RegistrationTTL),
		positive("--launch-timeout", o.LaunchTimeout),
		positive("--gc-interval", o.GCInterval),
		positive("--gc-grace", o.GCGrace),
		validateMaxInstanceTypes(o.MaxInstanceTypes),
		validateSchedulerNames(o.SchedulerNames),
		validateBindAddress("--metrics-bind-address", o.MetricsAddr),
		validateBindAddress("--health-probe-bind-address", o.HealthAddr),
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
		positive("--registration-ttl", s.RegistrationTTL),
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

// validateWindow checks the batch windows: both positive, idle no longer
// than max.
func validateWindow(idle, maxDur time.Duration) error {
	errs := []error{positive("--batch-idle-duration", idle), positive("--batch-max-duration", maxDur)}
	if idle > 0 && maxDur > 0 && idle > maxDur {
		errs = append(errs, fmt.Errorf("--batch-idle-duration %s must not exceed --batch-max-duration %s", idle, maxDur))
	}
	return errors.Join(errs...)
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
