package app

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/printable"
	"github.com/capstan-dev/capstan/pkg/report"
	"github.com/capstan-dev/capstan/pkg/simulator"
)

// SimulateOptions are what `capstan simulate` is run with.
type SimulateOptions struct {
	Files        []string
	CloudProfile string
	Output       string
	// Report is an HTML file to write as well as the output, if set.
	Report    string
	Simulator simulator.Options
	// Disruption are the controller's disruption flags, for the run.
	Disruption *DisruptionFlags
}

func newSimulateCommand() *cobra.Command {
	opts := SimulateOptions{Simulator: simulator.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "simulate -f PATH [-f PATH ...]",
		Short: "Show what Capstan would launch for the manifests, and what it costs, in virtual time with no cluster",
		Long: `simulate reads Kubernetes manifests (NodePools, SimNodeClasses, workloads,
PDBs, volumes, llmaz OpenModels and a CloudProfile) and runs Capstan's own
provisioning steps on the simulated cloud over virtual time. An object
annotated simulate.capstan.dev/apply-at or simulate.capstan.dev/delete-at
(durations from the start, e.g. 30m) is applied or deleted then.

The cloud profile is --cloud-profile, else the CloudProfile among the
manifests, else the embedded default cloud.`,
		Example: "  capstan simulate -f examples/spot-shortage\n  capstan simulate -f nodepool.yaml -f workload.yaml --duration 30m -o json\n  capstan simulate -f examples/spot-shortage --report spot-shortage.html",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSimulate(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&opts.Files, "filename", "f", nil, "manifest file or directory (recursive), or - for standard input; repeatable")
	f.StringVar(&opts.CloudProfile, "cloud-profile", "", "simulated cloud profile file (default: the CloudProfile among the manifests, else the embedded profile)")
	f.StringVarP(&opts.Output, "output", "o", "text", "output format: text or json")
	f.StringVar(&opts.Report, "report", "", "also write a self-contained HTML report (summary, charts over virtual time, tables) to this file")
	f.DurationVar(&opts.Simulator.Duration, "duration", opts.Simulator.Duration, "virtual time to simulate")
	f.Uint64Var(&opts.Simulator.Seed, "seed", opts.Simulator.Seed, "seed for names and every random choice; the same seed gives the same run")
	f.DurationVar(&opts.Simulator.Window.Idle, "batch-idle-duration", opts.Simulator.Window.Idle, "as for capstan controller")
	f.DurationVar(&opts.Simulator.Window.Max, "batch-max-duration", opts.Simulator.Window.Max, "as for capstan controller")
	f.DurationVar(&opts.Simulator.UnavailableTTL, "unavailable-offerings-ttl", opts.Simulator.UnavailableTTL, "as for capstan controller")
	f.DurationVar(&opts.Simulator.RegistrationTTL, "registration-ttl", opts.Simulator.RegistrationTTL, "as for capstan controller")
	f.DurationVar(&opts.Simulator.LaunchTimeout, "launch-timeout", opts.Simulator.LaunchTimeout, "as for capstan controller")
	f.DurationVar(&opts.Simulator.AtomicGroupLaunchTimeout, "atomic-group-launch-timeout", opts.Simulator.AtomicGroupLaunchTimeout, "as for capstan controller")
	f.IntVar(&opts.Simulator.MaxInstanceTypes, "max-instance-types", opts.Simulator.MaxInstanceTypes, "as for capstan controller")
	bindPolicyFlags(f, &opts.Simulator.MinValuesPolicy, &opts.Simulator.PreferencePolicy, opts.Simulator.MinValuesPolicy, opts.Simulator.PreferencePolicy, "as for capstan controller: ")
	f.StringSliceVar(&opts.Simulator.SchedulerNames, "scheduler-names", opts.Simulator.SchedulerNames, "as for capstan controller")
	opts.Disruption = newDisruptionFlags(f)
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

func runSimulate(cmd *cobra.Command, opts SimulateOptions) error {
	if err := opts.Validate(); err != nil {
		return fmt.Errorf("invalid flags: %w", err)
	}
	opts.Simulator.Disruption = opts.Disruption.simulator()
	opts.Simulator.CapacityBuffers = opts.Disruption.CapacityBuffers()
	set, err := manifests.Load(opts.Files, cmd.InOrStdin())
	if err != nil {
		return err
	}
	if len(set.Skipped) > 0 {
		var skipped []string
		for _, s := range set.Skipped {
			skipped = append(skipped, s.String())
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "skipped %d document(s) of kinds simulate does not model: %s\n", len(skipped), strings.Join(skipped, ", "))
	}
	result, err := simulator.Simulate(cmd.Context(), set, opts.CloudProfile, opts.Simulator)
	if err != nil {
		return err
	}
	if opts.Report != "" {
		if err := writeReport(opts.Report, result, strings.Join(opts.Files, ", ")); err != nil {
			return err
		}
	}
	return writeResult(cmd.OutOrStdout(), opts.Output, result)
}

// writeReport writes the HTML report, titled with what was simulated.
func writeReport(path string, r *simulator.Result, files string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating report %s, %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing report %s, %w", path, cerr)
		}
	}()
	if err := report.WriteHTML(f, r, "capstan simulate -f "+files); err != nil {
		return fmt.Errorf("writing %s, %w", path, err)
	}
	return nil
}

func writeResult(w io.Writer, output string, r *simulator.Result) error {
	if output == "json" {
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		// Names and messages come from the manifests and the cloud
		// profile; encoding/json leaves some runes a terminal obeys.
		_, err = w.Write(append(printable.JSON(data), '\n'))
		return err
	}
	return simulator.WriteText(w, r)
}
