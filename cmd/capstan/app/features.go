package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/component-base/featuregate"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/interruption"
	"github.com/capstan-dev/capstan/pkg/simulator"
)

// The feature gates, spelled as the reference's --feature-gates
// (decision 16).
const (
	FeatureDrift                   featuregate.Feature = "Drift"
	FeatureSpotToSpotConsolidation featuregate.Feature = "SpotToSpotConsolidation"
	FeatureNodeRepair              featuregate.Feature = "NodeRepair"
	// FeatureCapacityBuffer serves CapacityBuffers; off by default, as in
	// the reference's v1.14.1 (docs/batch.md, "Capacity buffers").
	FeatureCapacityBuffer featuregate.Feature = "CapacityBuffer"
)

// DefaultCapacityBuffer is the CapacityBuffer gate's default: a buffer
// launches nodes no pod asked for, so it is opted into, as in the
// reference's v1.14.1 (pkg/operator/options/options.go).
const DefaultCapacityBuffer = false

// DisruptionFlags are the disruption settings `capstan controller` and
// `capstan simulate` share.
type DisruptionFlags struct {
	Features           featuregate.MutableFeatureGate
	PollInterval       time.Duration
	ValidationDelay    time.Duration
	ReplacementTimeout time.Duration
	// PreemptibleMargin is how long before a preemptible VM's 24-hour
	// limit it is replaced within budgets (decision 18).
	PreemptibleMargin time.Duration
	// declared is the feature gates' declaration failing (a programming
	// error), reported by validate rather than a panic.
	declared error
}

// newDisruptionFlags binds the flags with the reference's defaults.
func newDisruptionFlags(f *pflag.FlagSet) *DisruptionFlags {
	d := &DisruptionFlags{Features: featuregate.NewFeatureGate()}
	if err := d.Features.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		FeatureDrift:                   {Default: disruption.DefaultGates().Drift, PreRelease: featuregate.Beta},
		FeatureSpotToSpotConsolidation: {Default: disruption.DefaultGates().SpotToSpotConsolidation, PreRelease: featuregate.Alpha},
		FeatureNodeRepair:              {Default: disruption.DefaultGates().NodeRepair, PreRelease: featuregate.Alpha},
		FeatureCapacityBuffer:          {Default: DefaultCapacityBuffer, PreRelease: featuregate.Beta},
	}); err != nil {
		d.declared = fmt.Errorf("declaring feature gates, %w", err)
	}
	d.Features.AddFlag(f)
	f.DurationVar(&d.PollInterval, "disruption-poll-interval", disruption.DefaultPollInterval, "how often disruption is evaluated while no command is in flight")
	f.DurationVar(&d.ValidationDelay, "disruption-validation-delay", disruption.DefaultValidationDelay, "how long a disruption decision waits before it is checked again against fresh state and carried out")
	f.DurationVar(&d.ReplacementTimeout, "disruption-replacement-timeout", disruption.DefaultReplacementTimeout, "abandon a disruption (un-tainting its nodes) when its replacements have not initialized by then")
	f.DurationVar(&d.PreemptibleMargin, "preemptible-replacement-margin", interruption.DefaultPreemptibleMargin, "replace preemptible (GCP-style spot) nodes this long before their 24-hour limit, within the Drifted budget")
	return d
}

// simulator are the flags as simulate's options.
func (d *DisruptionFlags) simulator() simulator.DisruptionOptions {
	return simulator.DisruptionOptions{Gates: d.Gates(), PollInterval: d.PollInterval, ValidationDelay: d.ValidationDelay, ReplacementTimeout: d.ReplacementTimeout,
		PreemptibleMargin: d.PreemptibleMargin}
}

// CapacityBuffers reports the CapacityBuffer feature gate.
func (d *DisruptionFlags) CapacityBuffers() bool { return d.Features.Enabled(FeatureCapacityBuffer) }

// Drift reports the Drift feature gate.
func (d *DisruptionFlags) Drift() bool { return d.Features.Enabled(FeatureDrift) }

// Gates are the disruption methods' feature gates.
func (d *DisruptionFlags) Gates() disruption.Gates {
	return disruption.Gates{Drift: d.Drift(), SpotToSpotConsolidation: d.Features.Enabled(FeatureSpotToSpotConsolidation),
		NodeRepair: d.Features.Enabled(FeatureNodeRepair)}
}

func (d *DisruptionFlags) validate() error {
	var delay error
	if d.ValidationDelay < 0 {
		delay = fmt.Errorf("--disruption-validation-delay must not be negative, got %s", d.ValidationDelay)
	}
	var margin error
	if d.PreemptibleMargin > interruption.MaxPreemptibleMargin {
		margin = fmt.Errorf("--preemptible-replacement-margin must be at most %s, half a preemptible VM's %s lifetime, so that each VM serves at least the other half; got %s",
			interruption.MaxPreemptibleMargin, cloudprovider.PreemptibleLifetime, d.PreemptibleMargin)
	}
	return errors.Join(d.declared, atLeast("--disruption-poll-interval", d.PollInterval, MinPollInterval), delay,
		positive("--disruption-replacement-timeout", d.ReplacementTimeout), positive("--preemptible-replacement-margin", d.PreemptibleMargin), margin)
}
